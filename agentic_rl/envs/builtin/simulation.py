"""Built-in CodeGym environments: simulation workflows (queues, stacks, machines, games stepped one move at a
time).

Each class is a `ToolEnv` (gym_base.py); `ORACLES` maps it to a scripted tool-only solution and `CONFIGS` to a
seeded generator of its task configurations. Written for this project, modelled on problem types of the
KodCode-V1 sample and the built-in tasks (no text copied).
"""

import json

# sent to the sandbox as gym_base's source followed by this file without this line (builtin_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv


def _q(call, name, **params):
    return json.loads(call(name, **params))


class RobotWalkEnv(ToolEnv):
    """A robot starts at (0, 0) facing north and follows the commands (L: turn left, R: turn right, F: one step
    forward). Answer its final position [x, y]."""

    def load(self, o):
        self.commands, self.x, self.y, self.heading = o["commands"], 0, 0, 0

    def Observe(self):
        """Return the number of commands."""
        return len(self.commands)

    def CommandAt(self, index):
        """Return command number index."""
        return self.commands[int(index)]

    def Turn(self, direction):
        """Turn left ("L") or right ("R"); return the heading (0 north, 1 east, 2 south, 3 west)."""
        self.heading = (self.heading + (1 if direction == "R" else -1)) % 4
        return self.heading

    def Forward(self):
        """Move one step in the heading; return [x, y]."""
        dx, dy = [(0, 1), (1, 0), (0, -1), (-1, 0)][self.heading]
        self.x, self.y = self.x + dx, self.y + dy
        return [self.x, self.y]

    def Position(self):
        """Return [x, y]."""
        return [self.x, self.y]

    def get_ref_answer(self):
        x = y = h = 0
        for c in self.commands:
            if c == "F":
                dx, dy = [(0, 1), (1, 0), (0, -1), (-1, 0)][h]
                x, y = x + dx, y + dy
            else:
                h = (h + (1 if c == "R" else -1)) % 4
        return [x, y]


def oracle_robot(call):
    for i in range(_q(call, "Observe")):
        c = call("CommandAt", index=i)
        if c == "F":
            call("Forward")
        else:
            call("Turn", direction=c)
    return _q(call, "Position")


class QueueServiceEnv(ToolEnv):
    """Customers arrive with service times; one clerk serves them in arrival order. Answer the list of times at
    which each customer's service ends."""

    def load(self, o):
        self.arrivals, self.durations, self.clock, self.ends = o["arrivals"], o["durations"], 0, []

    def Observe(self):
        """Return the number of customers and the clock."""
        return {"customers": len(self.arrivals), "clock": self.clock}

    def Customer(self, index):
        """Return customer index as {"arrival": a, "duration": d}."""
        return {"arrival": self.arrivals[int(index)], "duration": self.durations[int(index)]}

    def WaitUntil(self, time):
        """Advance the clock to time if it is later; return the clock."""
        self.clock = max(self.clock, time)
        return self.clock

    def Serve(self, duration):
        """Serve one customer for duration; return the clock at the end, recorded in the end times."""
        self.clock += duration
        self.ends.append(self.clock)
        return self.clock

    def EndTimes(self):
        """Return the recorded end times."""
        return self.ends

    def get_ref_answer(self):
        clock, out = 0, []
        for a, d in zip(self.arrivals, self.durations):
            clock = max(clock, a) + d
            out.append(clock)
        return out


def oracle_queue(call):
    n = _q(call, "Observe")["customers"]
    for i in range(n):
        c = _q(call, "Customer", index=i)
        call("WaitUntil", time=c["arrival"])
        call("Serve", duration=c["duration"])
    return _q(call, "EndTimes")


class StackMachineEnv(ToolEnv):
    """Run the program on a stack machine (PUSH n, ADD, MUL, SUB, DUP); answer the top of the stack at the end.
    SUB pops b then a and pushes a - b."""

    def load(self, o):
        self.program, self.stack = [list(i) for i in o["program"]], []

    def Observe(self):
        """Return the number of instructions."""
        return len(self.program)

    def Instruction(self, index):
        """Return instruction index as [opcode] or [opcode, argument]."""
        return self.program[int(index)]

    def Push(self, value):
        """Push value; return the stack."""
        self.stack.append(value)
        return self.stack

    def Pop(self):
        """Pop and return the top value."""
        return self.stack.pop()

    def Apply(self, opcode, a, b):
        """Return the result of ADD, MUL or SUB on a and b."""
        return {"ADD": a + b, "MUL": a * b, "SUB": a - b}[opcode]

    def get_ref_answer(self):
        st = []
        for ins in self.program:
            if ins[0] == "PUSH":
                st.append(ins[1])
            elif ins[0] == "DUP":
                st.append(st[-1])
            else:
                b, a = st.pop(), st.pop()
                st.append({"ADD": a + b, "MUL": a * b, "SUB": a - b}[ins[0]])
        return st[-1]


def oracle_stack_machine(call):
    top = None
    for i in range(_q(call, "Observe")):
        ins = _q(call, "Instruction", index=i)
        if ins[0] == "PUSH":
            call("Push", value=ins[1])
        elif ins[0] == "DUP":
            v = _q(call, "Pop")
            call("Push", value=v)
            call("Push", value=v)
        else:
            b, a = _q(call, "Pop"), _q(call, "Pop")
            call("Push", value=_q(call, "Apply", opcode=ins[0], a=a, b=b))
    top = _q(call, "Pop")
    return top


class BankLedgerEnv(ToolEnv):
    """Apply the transactions to the accounts in order; a withdrawal or transfer that would overdraw its source
    is skipped. Answer the final balances as an object."""

    def load(self, o):
        self.balances, self.transactions = dict(o["balances"]), [list(t) for t in o["transactions"]]

    def Observe(self):
        """Return the number of transactions."""
        return len(self.transactions)

    def Transaction(self, index):
        """Return transaction index: ["deposit", acct, amount], ["withdraw", acct, amount] or
        ["transfer", from, to, amount]."""
        return self.transactions[int(index)]

    def Balance(self, account):
        """Return the balance of account."""
        return self.balances[account]

    def Change(self, account, delta):
        """Add delta to the balance of account; return the new balance."""
        self.balances[account] += delta
        return self.balances[account]

    def Balances(self):
        """Return every balance."""
        return self.balances

    def get_ref_answer(self):
        b = dict(self.balances)
        for t in self.transactions:
            if t[0] == "deposit":
                b[t[1]] += t[2]
            elif t[0] == "withdraw" and b[t[1]] >= t[2]:
                b[t[1]] -= t[2]
            elif t[0] == "transfer" and b[t[1]] >= t[3]:
                b[t[1]] -= t[3]
                b[t[2]] += t[3]
        return b


def oracle_ledger(call):
    for i in range(_q(call, "Observe")):
        t = _q(call, "Transaction", index=i)
        if t[0] == "deposit":
            call("Change", account=t[1], delta=t[2])
        elif t[0] == "withdraw" and _q(call, "Balance", account=t[1]) >= t[2]:
            call("Change", account=t[1], delta=-t[2])
        elif t[0] == "transfer" and _q(call, "Balance", account=t[1]) >= t[3]:
            call("Change", account=t[1], delta=-t[3])
            call("Change", account=t[2], delta=t[3])
    return _q(call, "Balances")


class ElevatorEnv(ToolEnv):
    """An elevator starts at floor 0 and visits the requested floors in order. Answer the total number of floors
    it travels."""

    def load(self, o):
        self.requests, self.floor, self.travelled = o["requests"], 0, 0

    def Observe(self):
        """Return the number of requests and the current floor."""
        return {"requests": len(self.requests), "floor": self.floor}

    def Request(self, index):
        """Return requested floor number index."""
        return self.requests[int(index)]

    def MoveTo(self, floor):
        """Move to floor; return the floors travelled by this move."""
        moved = abs(int(floor) - self.floor)
        self.floor, self.travelled = int(floor), self.travelled + moved
        return moved

    def Travelled(self):
        """Return the floors travelled so far."""
        return self.travelled

    def get_ref_answer(self):
        pos = total = 0
        for f in self.requests:
            total, pos = total + abs(f - pos), f
        return total


def oracle_elevator(call):
    for i in range(_q(call, "Observe")["requests"]):
        call("MoveTo", floor=_q(call, "Request", index=i))
    return _q(call, "Travelled")


class InventoryEnv(ToolEnv):
    """Process the orders against the stock: an order is filled only if every item is in stock, then removed
    from stock. Answer the number of filled orders."""

    def load(self, o):
        self.stock, self.orders, self.filled = dict(o["stock"]), [dict(x) for x in o["orders"]], 0

    def Observe(self):
        """Return the number of orders."""
        return len(self.orders)

    def Order(self, index):
        """Return order index as an object item -> quantity."""
        return self.orders[int(index)]

    def InStock(self, item):
        """Return the stock of item."""
        return self.stock.get(item, 0)

    def Take(self, item, quantity):
        """Remove quantity of item from stock; return what is left."""
        self.stock[item] = self.stock.get(item, 0) - quantity
        return self.stock[item]

    def MarkFilled(self):
        """Count one filled order; return the count."""
        self.filled += 1
        return self.filled

    def get_ref_answer(self):
        stock, filled = dict(self.stock), 0
        for order in self.orders:
            if all(stock.get(k, 0) >= v for k, v in order.items()):
                for k, v in order.items():
                    stock[k] -= v
                filled += 1
        return filled


def oracle_inventory(call):
    filled = 0
    for i in range(_q(call, "Observe")):
        order = _q(call, "Order", index=i)
        if all(_q(call, "InStock", item=k) >= v for k, v in order.items()):
            for k, v in order.items():
                call("Take", item=k, quantity=v)
            filled = _q(call, "MarkFilled")
    return filled


class TrafficLightEnv(ToolEnv):
    """A light cycles green (g seconds), yellow (y), red (r), starting green at time 0. Answer its colour at each
    of the query times, as a list."""

    def load(self, o):
        self.g, self.y, self.r, self.times = o["g"], o["y"], o["r"], o["times"]

    def Observe(self):
        """Return {"green": g, "yellow": y, "red": r, "queries": number of query times}."""
        return {"green": self.g, "yellow": self.y, "red": self.r, "queries": len(self.times)}

    def QueryTime(self, index):
        """Return query time number index."""
        return self.times[int(index)]

    def Mod(self, a, b):
        """Return a mod b."""
        return a % b

    def ColourAt(self, offset):
        """Return the colour at offset seconds into one cycle."""
        return "green" if offset < self.g else "yellow" if offset < self.g + self.y else "red"

    def get_ref_answer(self):
        cycle = self.g + self.y + self.r
        return [self.ColourAt(t % cycle) for t in self.times]


def oracle_traffic(call):
    info = _q(call, "Observe")
    cycle = info["green"] + info["yellow"] + info["red"]
    return [
        call("ColourAt", offset=_q(call, "Mod", a=_q(call, "QueryTime", index=i), b=cycle))
        for i in range(info["queries"])
    ]


class LifeStepEnv(ToolEnv):
    """Play one generation of Conway's Game of Life on the grid (cells outside are dead); answer the new grid."""

    def load(self, o):
        self.grid, self.next = [list(r) for r in o["grid"]], [[0] * len(o["grid"][0]) for _ in o["grid"]]

    def Observe(self):
        """Return {"rows": r, "cols": c}."""
        return {"rows": len(self.grid), "cols": len(self.grid[0])}

    def LiveNeighbours(self, row, col):
        """Return the number of live cells around row, col."""
        r, c = int(row), int(col)
        return sum(
            self.grid[y][x]
            for y in range(r - 1, r + 2)
            for x in range(c - 1, c + 2)
            if (y, x) != (r, c) and 0 <= y < len(self.grid) and 0 <= x < len(self.grid[0])
        )

    def Alive(self, row, col):
        """Return 1 if the cell is alive now, else 0."""
        return self.grid[int(row)][int(col)]

    def SetNext(self, row, col, value):
        """Set the cell of the next generation."""
        self.next[int(row)][int(col)] = int(value)
        return "ok"

    def NextGrid(self):
        """Return the next generation as set so far."""
        return self.next

    def get_ref_answer(self):
        out = []
        for r in range(len(self.grid)):
            row = []
            for c in range(len(self.grid[0])):
                n = self.LiveNeighbours(r, c)
                row.append(int(n == 3 or (n == 2 and self.grid[r][c] == 1)))
            out.append(row)
        return out


def oracle_life(call):
    size = _q(call, "Observe")
    for r in range(size["rows"]):
        for c in range(size["cols"]):
            n = _q(call, "LiveNeighbours", row=r, col=c)
            alive = n == 3 or (n == 2 and _q(call, "Alive", row=r, col=c) == 1)
            if alive:
                call("SetNext", row=r, col=c, value=1)
    return _q(call, "NextGrid")


class VendingMachineEnv(ToolEnv):
    """A vending machine takes coins and sells items; answer the change returned for each purchase, as a list
    (a purchase with too little credit returns nothing and keeps the credit)."""

    def load(self, o):
        self.events, self.prices, self.credit, self.change = [list(e) for e in o["events"]], o["prices"], 0, []

    def Observe(self):
        """Return the number of events."""
        return len(self.events)

    def Event(self, index):
        """Return event index: ["coin", value] or ["buy", item]."""
        return self.events[int(index)]

    def Insert(self, value):
        """Add value to the credit; return the credit."""
        self.credit += value
        return self.credit

    def Price(self, item):
        """Return the price of item."""
        return self.prices[item]

    def Sell(self, price):
        """Sell at price if the credit suffices: return the change and reset the credit; else return -1."""
        if self.credit < price:
            return -1
        change, self.credit = self.credit - price, 0
        self.change.append(change)
        return change

    def Changes(self):
        """Return the change of every sale so far."""
        return self.change

    def get_ref_answer(self):
        credit, out = 0, []
        for e in self.events:
            if e[0] == "coin":
                credit += e[1]
            elif credit >= self.prices[e[1]]:
                out.append(credit - self.prices[e[1]])
                credit = 0
        return out


def oracle_vending(call):
    for i in range(_q(call, "Observe")):
        e = _q(call, "Event", index=i)
        if e[0] == "coin":
            call("Insert", value=e[1])
        else:
            call("Sell", price=_q(call, "Price", item=e[1]))
    return _q(call, "Changes")


class TaskSchedulerEnv(ToolEnv):
    """Run the jobs round-robin with a time slice q: each turn the first job in the queue runs for up to q units
    and goes to the back if unfinished. Answer the order in which the jobs finish (their names)."""

    def load(self, o):
        self.queue, self.q, self.finished = [list(j) for j in o["jobs"]], o["q"], []

    def Observe(self):
        """Return {"jobs": number in the queue, "slice": q}."""
        return {"jobs": len(self.queue), "slice": self.q}

    def RunFirst(self, units):
        """Run the first job for units; return [name, remaining]; a finished job leaves the queue, an unfinished
        one goes to the back."""
        name, left = self.queue.pop(0)
        left -= min(int(units), left)
        if left:
            self.queue.append([name, left])
        else:
            self.finished.append(name)
        return [name, left]

    def QueueLength(self):
        """Return the number of jobs in the queue."""
        return len(self.queue)

    def Finished(self):
        """Return the names of the finished jobs, in order."""
        return self.finished

    def get_ref_answer(self):
        queue, out = [list(j) for j in self.queue], []
        while queue:
            name, left = queue.pop(0)
            left -= min(self.q, left)
            (queue.append([name, left]) if left else out.append(name))
        return out


def oracle_scheduler(call):
    info = _q(call, "Observe")
    while _q(call, "QueueLength") > 0:
        call("RunFirst", units=info["slice"])
    return _q(call, "Finished")


def _program(rng):
    prog = [["PUSH", rng.randint(1, 9)], ["PUSH", rng.randint(1, 9)]]
    depth = 2
    for _ in range(rng.randint(3, 6)):
        if depth >= 2 and rng.random() < 0.5:
            prog.append([rng.choice(["ADD", "MUL", "SUB"])])
            depth -= 1
        elif rng.random() < 0.3:
            prog.append(["DUP"])
            depth += 1
        else:
            prog.append(["PUSH", rng.randint(1, 9)])
            depth += 1
    while depth > 1:
        prog.append([rng.choice(["ADD", "SUB"])])
        depth -= 1
    return {"program": prog}


def _ledger(rng):
    names = ["ann", "bob", "cy"]
    txs = []
    for _ in range(rng.randint(4, 7)):
        kind = rng.choice(["deposit", "withdraw", "transfer"])
        a, b = rng.sample(names, 2)
        txs.append([kind, a, rng.randint(1, 30)] if kind != "transfer" else [kind, a, b, rng.randint(1, 30)])
    return {"balances": {n: rng.randint(0, 30) for n in names}, "transactions": txs}


def _inventory(rng):
    items = ["pen", "cup", "hat"]
    orders = [{k: rng.randint(1, 3) for k in rng.sample(items, rng.randint(1, 2))} for _ in range(rng.randint(3, 5))]
    return {"stock": {k: rng.randint(1, 5) for k in items}, "orders": orders}


def _vending(rng):
    events = []
    for _ in range(rng.randint(3, 5)):
        events += [["coin", rng.choice([5, 10, 25])] for _ in range(rng.randint(1, 3))]
        events.append(["buy", rng.choice(["tea", "gum", "pie"])])
    return {"events": events, "prices": {"tea": 15, "gum": 10, "pie": 30}}


ORACLES = {
    RobotWalkEnv: oracle_robot,
    QueueServiceEnv: oracle_queue,
    StackMachineEnv: oracle_stack_machine,
    BankLedgerEnv: oracle_ledger,
    ElevatorEnv: oracle_elevator,
    InventoryEnv: oracle_inventory,
    TrafficLightEnv: oracle_traffic,
    LifeStepEnv: oracle_life,
    VendingMachineEnv: oracle_vending,
    TaskSchedulerEnv: oracle_scheduler,
}
CONFIGS = {
    RobotWalkEnv: lambda rng: {"commands": "".join(rng.choice("LRFFF") for _ in range(rng.randint(6, 12)))},
    QueueServiceEnv: lambda rng: {
        "arrivals": sorted(rng.randint(0, 20) for _ in range(4)),
        "durations": [rng.randint(1, 6) for _ in range(4)],
    },
    StackMachineEnv: _program,
    BankLedgerEnv: _ledger,
    ElevatorEnv: lambda rng: {"requests": [rng.randint(0, 12) for _ in range(rng.randint(5, 9))]},
    InventoryEnv: _inventory,
    TrafficLightEnv: lambda rng: {
        "g": rng.randint(2, 6),
        "y": rng.randint(1, 2),
        "r": rng.randint(2, 6),
        "times": [rng.randint(0, 40) for _ in range(rng.randint(4, 6))],
    },
    LifeStepEnv: lambda rng: {"grid": [[int(rng.random() < 0.4) for _ in range(3)] for _ in range(3)]},
    VendingMachineEnv: _vending,
    TaskSchedulerEnv: lambda rng: {
        "jobs": [[n, rng.randint(1, 7)] for n in rng.sample("ABCDE", rng.randint(3, 4))],
        "q": rng.randint(1, 3),
    },
}

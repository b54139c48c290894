"""Built-in CodeGym environments: graph workflows (BFS, DFS, components, topological order, shortest paths).

Each class is a `ToolEnv` (gym_base.py); `ORACLES` maps it to a scripted tool-only solution and `CONFIGS` to a
seeded generator of its task configurations. Graphs are undirected unless a class says otherwise; nodes are
0..n-1. Written for this project, modelled on problem types of the KodCode-V1 sample (no text copied).
"""

import itertools
import json

# sent to the sandbox as gym_base's source followed by this file without this line (builtin_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv


def _q(call, name, **params):
    return json.loads(call(name, **params))


class GraphEnv(ToolEnv):
    """Shared tools of the graph environments: the node count, adjacency, and a visited set."""

    directed = False

    def load(self, o):
        self.n, self.edges, self.visited = o["n"], [list(e) for e in o["edges"]], []
        self.source, self.target = o.get("source", 0), o.get("target", 0)

    def Observe(self):
        """Return {"nodes": n, "source": s, "target": t} (source and target matter only where the task says)."""
        return {"nodes": self.n, "source": self.source, "target": self.target}

    def Neighbors(self, node):
        """Return the neighbours of node, ascending."""
        node = int(node)
        out = {b for a, b in self.edges if a == node}
        if not self.directed:
            out |= {a for a, b in self.edges if b == node}
        return sorted(out)

    def Visit(self, node):
        """Mark node visited; return false if it already was."""
        if node in self.visited:
            return False
        self.visited.append(node)
        return True

    def IsVisited(self, node):
        """Return true if node was visited."""
        return node in self.visited

    def _adj(self):
        return {v: self.Neighbors(v) for v in range(self.n)}


class CountComponentsEnv(GraphEnv):
    """Count the connected components of the graph."""

    def get_ref_answer(self):
        adj, seen, count = self._adj(), set(), 0
        for s in range(self.n):
            if s not in seen:
                count += 1
                stack = [s]
                while stack:
                    v = stack.pop()
                    if v not in seen:
                        seen.add(v)
                        stack += adj[v]
        return count


def oracle_components(call):
    n = _q(call, "Observe")["nodes"]
    count = 0
    for s in range(n):
        if _q(call, "IsVisited", node=s):
            continue
        count += 1
        stack = [s]
        while stack:
            v = stack.pop()
            if _q(call, "Visit", node=v):
                stack += _q(call, "Neighbors", node=v)
    return count


class ShortestPathLengthEnv(GraphEnv):
    """Find the number of edges on a shortest path from source to target (-1 if unreachable), by BFS."""

    def get_ref_answer(self):
        adj, dist, frontier = self._adj(), {self.source: 0}, [self.source]
        while frontier:
            nxt = []
            for v in frontier:
                for w in adj[v]:
                    if w not in dist:
                        dist[w] = dist[v] + 1
                        nxt.append(w)
            frontier = nxt
        return dist.get(self.target, -1)


def oracle_shortest_path(call):
    info = _q(call, "Observe")
    frontier, depth = [info["source"]], 0
    call("Visit", node=info["source"])
    while frontier:
        if info["target"] in frontier:
            return depth
        nxt = []
        for v in frontier:
            for w in _q(call, "Neighbors", node=v):
                if _q(call, "Visit", node=w):
                    nxt.append(w)
        frontier, depth = nxt, depth + 1
    return -1


class ReachableSetEnv(GraphEnv):
    """List every node reachable from source (source included), ascending."""

    def Sort(self, values):
        """Return values sorted ascending."""
        return sorted(values)

    def get_ref_answer(self):
        adj, seen, stack = self._adj(), set(), [self.source]
        while stack:
            v = stack.pop()
            if v not in seen:
                seen.add(v)
                stack += adj[v]
        return sorted(seen)


def oracle_reachable(call):
    stack, found = [_q(call, "Observe")["source"]], []
    while stack:
        v = stack.pop()
        if _q(call, "Visit", node=v):
            found.append(v)
            stack += _q(call, "Neighbors", node=v)
    return _q(call, "Sort", values=found)


class TopologicalOrderEnv(GraphEnv):
    """The graph is directed and acyclic: list its nodes in topological order, always taking the smallest
    available node first (Kahn's algorithm)."""

    directed = True

    def load(self, o):
        super().load(o)
        self.removed = []

    def InDegree(self, node):
        """Return the number of edges into node from nodes not yet removed."""
        return sum(1 for a, b in self.edges if b == int(node) and a not in self.removed)

    def Remove(self, node):
        """Remove node (append it to the order); return the order so far."""
        self.removed.append(int(node))
        return self.removed

    def IsRemoved(self, node):
        """Return true if node was removed."""
        return int(node) in self.removed

    def get_ref_answer(self):
        order = []
        while len(order) < self.n:
            ready = [v for v in range(self.n) if v not in order and all(a in order for a, b in self.edges if b == v)]
            order.append(min(ready))
        return order


def oracle_topological(call):
    n = _q(call, "Observe")["nodes"]
    order = []
    while len(order) < n:
        for v in range(n):
            if not _q(call, "IsRemoved", node=v) and _q(call, "InDegree", node=v) == 0:
                order = _q(call, "Remove", node=v)
                break
    return order


class HasCycleEnv(GraphEnv):
    """Decide whether the undirected graph contains a cycle (true/false)."""

    def load(self, o):
        super().load(o)
        self.parent = list(range(self.n))

    def Find(self, node):
        """Return the representative of node's set (union-find)."""
        node = int(node)
        while self.parent[node] != node:
            node = self.parent[node]
        return node

    def Union(self, a, b):
        """Join the sets of representatives a and b."""
        self.parent[int(a)] = int(b)
        return "ok"

    def EdgeCount(self):
        """Return the number of edges."""
        return len(self.edges)

    def EdgeAt(self, index):
        """Return edge number index as [a, b]."""
        return self.edges[int(index)]

    def get_ref_answer(self):
        parent = list(range(self.n))

        def find(v):
            while parent[v] != v:
                v = parent[v]
            return v

        for a, b in self.edges:
            ra, rb = find(a), find(b)
            if ra == rb:
                return True
            parent[ra] = rb
        return False


def oracle_has_cycle(call):
    for i in range(_q(call, "EdgeCount")):
        a, b = _q(call, "EdgeAt", index=i)
        ra, rb = _q(call, "Find", node=a), _q(call, "Find", node=b)
        if ra == rb:
            return True
        call("Union", a=ra, b=rb)
    return False


class DegreeRankingEnv(GraphEnv):
    """List the nodes ordered by degree, highest first; ties by the smaller node first."""

    def Degree(self, node):
        """Return the number of neighbours of node."""
        return len(self.Neighbors(node))

    def RankBy(self, values):
        """Return the positions of values ordered by value descending, ties by position ascending."""
        return sorted(range(len(values)), key=lambda i: (-values[i], i))

    def get_ref_answer(self):
        return sorted(range(self.n), key=lambda v: (-len(self.Neighbors(v)), v))


def oracle_degree_ranking(call):
    n = _q(call, "Observe")["nodes"]
    return _q(call, "RankBy", values=[_q(call, "Degree", node=v) for v in range(n)])


class BipartiteCheckEnv(GraphEnv):
    """Decide whether the graph's nodes can be coloured with two colours so that no edge joins equal colours."""

    def load(self, o):
        super().load(o)
        self.colour = {}

    def SetColour(self, node, colour):
        """Give node the colour 0 or 1."""
        self.colour[str(int(node))] = int(colour)
        return "ok"

    def ColourOf(self, node):
        """Return the colour of node, or -1 if it has none."""
        return self.colour.get(str(int(node)), -1)

    def get_ref_answer(self):
        adj, colour = self._adj(), {}
        for s in range(self.n):
            if s in colour:
                continue
            colour[s], stack = 0, [s]
            while stack:
                v = stack.pop()
                for w in adj[v]:
                    if w not in colour:
                        colour[w] = 1 - colour[v]
                        stack.append(w)
                    elif colour[w] == colour[v]:
                        return False
        return True


def oracle_bipartite(call):
    n = _q(call, "Observe")["nodes"]
    for s in range(n):
        if _q(call, "ColourOf", node=s) >= 0:
            continue
        call("SetColour", node=s, colour=0)
        stack = [s]
        while stack:
            v = stack.pop()
            cv = _q(call, "ColourOf", node=v)
            for w in _q(call, "Neighbors", node=v):
                cw = _q(call, "ColourOf", node=w)
                if cw < 0:
                    call("SetColour", node=w, colour=1 - cv)
                    stack.append(w)
                elif cw == cv:
                    return False
    return True


class GridIslandsEnv(ToolEnv):
    """Count the islands of the grid: groups of 1-cells joined up, down, left or right."""

    def load(self, o):
        self.grid, self.seen = [list(r) for r in o["grid"]], []

    def Observe(self):
        """Return {"rows": r, "cols": c}."""
        return {"rows": len(self.grid), "cols": len(self.grid[0])}

    def Cell(self, row, col):
        """Return the cell at row, col (0 or 1), or 0 outside the grid."""
        r, c = int(row), int(col)
        return self.grid[r][c] if 0 <= r < len(self.grid) and 0 <= c < len(self.grid[0]) else 0

    def MarkSeen(self, row, col):
        """Mark the cell seen; return false if it already was."""
        key = [int(row), int(col)]
        if key in self.seen:
            return False
        self.seen.append(key)
        return True

    def IsSeen(self, row, col):
        """Return true if the cell was marked."""
        return [int(row), int(col)] in self.seen

    def get_ref_answer(self):
        rows, cols, seen, count = len(self.grid), len(self.grid[0]), set(), 0
        for r in range(rows):
            for c in range(cols):
                if self.grid[r][c] and (r, c) not in seen:
                    count += 1
                    stack = [(r, c)]
                    while stack:
                        y, x = stack.pop()
                        if 0 <= y < rows and 0 <= x < cols and self.grid[y][x] and (y, x) not in seen:
                            seen.add((y, x))
                            stack += [(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)]
        return count


def oracle_islands(call):
    size = _q(call, "Observe")
    count = 0
    for r in range(size["rows"]):
        for c in range(size["cols"]):
            if _q(call, "IsSeen", row=r, col=c) or not _q(call, "Cell", row=r, col=c):
                continue
            count += 1
            stack = [(r, c)]
            while stack:
                y, x = stack.pop()
                if _q(call, "Cell", row=y, col=x) and _q(call, "MarkSeen", row=y, col=x):
                    stack += [(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)]
    return count


class WeightedPathEnv(ToolEnv):
    """Find the cheapest total weight from node 0 to the last node of the directed weighted graph (Dijkstra)."""

    def load(self, o):
        self.n, self.edges = o["n"], [list(e) for e in o["edges"]]
        self.dist, self.done = {"0": 0}, []

    def Observe(self):
        """Return the number of nodes."""
        return self.n

    def OutEdges(self, node):
        """Return the edges leaving node as [target, weight] pairs."""
        return [[b, w] for a, b, w in self.edges if a == int(node)]

    def Relax(self, node, distance):
        """Lower the tentative distance of node to distance if smaller; return its tentative distance."""
        key = str(int(node))
        if key not in self.dist or distance < self.dist[key]:
            self.dist[key] = distance
        return self.dist[key]

    def ClosestOpen(self):
        """Return [node, distance] of the unfinished node with the smallest tentative distance ([-1, -1] if none);
        that node becomes finished."""
        open_ = [(d, int(k)) for k, d in self.dist.items() if int(k) not in self.done]
        if not open_:
            return [-1, -1]
        d, v = min(open_)
        self.done.append(v)
        return [v, d]

    def get_ref_answer(self):
        dist, done = {0: 0}, set()
        while True:
            open_ = [(d, v) for v, d in dist.items() if v not in done]
            if not open_:
                return dist.get(self.n - 1, -1)
            d, v = min(open_)
            done.add(v)
            for a, b, w in self.edges:
                if a == v and (b not in dist or d + w < dist[b]):
                    dist[b] = d + w


def oracle_weighted_path(call):
    last = _q(call, "Observe") - 1
    while True:
        v, d = _q(call, "ClosestOpen")
        if v < 0:
            return -1
        if v == last:
            return d
        for b, w in _q(call, "OutEdges", node=v):
            call("Relax", node=b, distance=d + w)


class TreeDepthEnv(ToolEnv):
    """The tree is given by each node's children; find its depth (nodes on the longest root-to-leaf path)."""

    def load(self, o):
        self.children = {str(k): list(v) for k, v in o["children"].items()}

    def Observe(self):
        """Return the root node (0)."""
        return 0

    def Children(self, node):
        """Return the children of node."""
        return self.children.get(str(int(node)), [])

    def Max(self, a, b):
        """Return the larger of a and b."""
        return max(a, b)

    def Add(self, a, b):
        """Return a + b."""
        return a + b

    def get_ref_answer(self):
        def depth(v):
            return 1 + max((depth(c) for c in self.children.get(str(v), [])), default=0)

        return depth(0)


def oracle_tree_depth(call):
    def depth(v):
        best = 0
        for c in _q(call, "Children", node=v):
            best = _q(call, "Max", a=best, b=depth(c))
        return _q(call, "Add", a=best, b=1)

    return depth(_q(call, "Observe"))


def _graph(rng, n_lo=5, n_hi=8, p=0.3, path=0, min_edges=0):
    """A random graph; `path` nodes (0 first, the target last) are chained, so the target is `path`-1 edges or
    fewer from 0 and the walks have work to do."""
    n = rng.randint(n_lo, n_hi)
    edges = [[a, b] for a in range(n) for b in range(a + 1, n) if rng.random() < p]
    chain = [0] + rng.sample(range(1, n), max(path - 1, 1))
    if path:
        edges += [sorted([a, b]) for a, b in itertools.pairwise(chain) if sorted([a, b]) not in edges]
    if len(edges) < min_edges:
        return _graph(rng, n_lo, n_hi, p, path, min_edges)
    return {"n": n, "edges": edges, "source": 0, "target": chain[-1]}


def _far_target(rng):
    """A graph whose target is at least 3 edges from the source (so a search has work to do)."""
    g = _graph(rng, 8, 11, 0.12, path=6)
    adj = {v: set() for v in range(g["n"])}
    for a, b in g["edges"]:
        adj[a].add(b)
        adj[b].add(a)
    dist, frontier = {0: 0}, [0]
    while frontier:
        nxt = []
        for v in frontier:
            for w in adj[v] - set(dist):
                dist[w] = dist[v] + 1
                nxt.append(w)
        frontier = nxt
    return g if dist.get(g["target"], 0) >= 3 else _far_target(rng)


def _dag(rng):
    n = rng.randint(4, 6)
    order = list(range(n))
    rng.shuffle(order)
    edges = [[order[i], order[j]] for i in range(n) for j in range(i + 1, n) if rng.random() < 0.35]
    return {"n": n, "edges": edges}


def _grid(rng):
    rows, cols = rng.randint(3, 4), rng.randint(3, 5)
    return {"grid": [[int(rng.random() < 0.45) for _ in range(cols)] for _ in range(rows)]}


def _weighted(rng):
    n = rng.randint(6, 8)
    edges = [[a, b, rng.randint(1, 9)] for a in range(n) for b in range(n) if a != b and rng.random() < 0.35]
    edges += [[i, i + 1, rng.randint(8, 15)] for i in range(n - 1)]  # the last node is always reachable
    return {"n": n, "edges": edges}


def _tree(rng):
    n = rng.randint(6, 10)
    children = {}
    for v in range(1, n):
        children.setdefault(rng.randrange(v), []).append(v)
    return {"children": {str(k): v for k, v in children.items()}}


ORACLES = {
    CountComponentsEnv: oracle_components,
    ShortestPathLengthEnv: oracle_shortest_path,
    ReachableSetEnv: oracle_reachable,
    TopologicalOrderEnv: oracle_topological,
    HasCycleEnv: oracle_has_cycle,
    DegreeRankingEnv: oracle_degree_ranking,
    BipartiteCheckEnv: oracle_bipartite,
    GridIslandsEnv: oracle_islands,
    WeightedPathEnv: oracle_weighted_path,
    TreeDepthEnv: oracle_tree_depth,
}
CONFIGS = {
    CountComponentsEnv: lambda rng: _graph(rng, 5, 8, 0.2),
    ShortestPathLengthEnv: _far_target,
    ReachableSetEnv: lambda rng: _graph(rng, 6, 9, 0.2, path=4),
    TopologicalOrderEnv: _dag,
    HasCycleEnv: lambda rng: _graph(rng, 6, 9, 0.25, min_edges=4),
    DegreeRankingEnv: lambda rng: _graph(rng, 8, 11, 0.35),
    BipartiteCheckEnv: lambda rng: _graph(rng, 5, 7, 0.35),
    GridIslandsEnv: _grid,
    WeightedPathEnv: _weighted,
    TreeDepthEnv: _tree,
}

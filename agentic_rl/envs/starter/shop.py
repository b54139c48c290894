"""Starter CodeGym environments: a shop whose prices are hidden behind a Price tool; an order is costed by a short
chain of lookups and arithmetic tools.

Each class is a `ToolEnv` (envs/builtin/gym_base.py) whose `solve(options)` is its reference answer; `ORACLES` maps
it to a scripted tool-only solution and `CONFIGS` to a seeded generator of its configurations. Observe shows the
order, never the prices, so no answer can be read off the task's input: the agent must look each price up and copy
the results into the next call. Written for this project (no text copied).
"""

import json

# sent to the sandbox as gym_base's source followed by this file without this line (starter_records)
from agentic_rl.envs.builtin.gym_base import ToolEnv

ITEMS = ["apple", "pear", "plum", "fig", "lime", "kiwi", "mango", "peach", "grape", "melon", "lemon", "cherry"]


def _q(call, name, **params):
    return json.loads(call(name, **params))


class ShopEnv(ToolEnv):
    """Shared tools of the shop environments: the price list (hidden), the order, and arithmetic."""

    def load(self, o):
        self.prices = {str(k): int(v) for k, v in o["prices"].items()}
        self.order = {k: v for k, v in o.items() if k != "prices"}

    def get_ref_answer(self):
        return self.solve({"prices": self.prices, **self.order})

    def Observe(self):
        """Observe(): return the order of this task."""
        return self.order

    def Price(self, item):
        """Price(item): return the price of one item."""
        if item not in self.prices:
            raise KeyError(f"no item {item!r} in this shop")
        return self.prices[item]

    def Add(self, a, b):
        """Add(a, b): return a + b."""
        return a + b

    def Subtract(self, a, b):
        """Subtract(a, b): return a - b."""
        return a - b

    def Multiply(self, a, b):
        """Multiply(a, b): return a * b."""
        return a * b

    def Sum(self, values):
        """Sum(values): return the sum of the list values."""
        return sum(values)


class ItemPriceEnv(ShopEnv):
    """Observe shows {"item": name}. Find the price of that item, then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        return o["prices"][o["item"]]


def oracle_item_price(call):
    return _q(call, "Price", item=_q(call, "Observe")["item"])


class OrderCostEnv(ShopEnv):
    """Observe shows {"item": name, "quantity": n}. Find the cost of the order, the item's price times the quantity,
    then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        return o["prices"][o["item"]] * o["quantity"]


def oracle_order_cost(call):
    order = _q(call, "Observe")
    price = _q(call, "Price", item=order["item"])
    return _q(call, "Multiply", a=price, b=order["quantity"])


class BasketTotalEnv(ShopEnv):
    """Observe shows {"items": [names]}. Find the total price of the basket, the sum of the items' prices, then call
    Done with it as the answer."""

    @staticmethod
    def solve(o):
        return sum(o["prices"][i] for i in o["items"])


def oracle_basket_total(call):
    prices = [_q(call, "Price", item=i) for i in _q(call, "Observe")["items"]]
    return _q(call, "Sum", values=prices)


class PriceDifferenceEnv(ShopEnv):
    """Observe shows {"items": [first, second]}. Find how much more the first item costs than the second (the first
    price minus the second price), then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        first, second = o["items"]
        return o["prices"][first] - o["prices"][second]


def oracle_price_difference(call):
    first, second = _q(call, "Observe")["items"]
    return _q(call, "Subtract", a=_q(call, "Price", item=first), b=_q(call, "Price", item=second))


class PairCostEnv(ShopEnv):
    """Observe shows {"items": [first, second]}. Find what the two items cost together (the first price plus the
    second price), then call Done with it as the answer."""

    @staticmethod
    def solve(o):
        first, second = o["items"]
        return o["prices"][first] + o["prices"][second]


def oracle_pair_cost(call):
    first, second = _q(call, "Observe")["items"]
    return _q(call, "Add", a=_q(call, "Price", item=first), b=_q(call, "Price", item=second))


def _prices(rng):
    """A price (2 to 40) for 8 of the items: a shop of its own per configuration, so no price can be remembered."""
    return {name: rng.randint(2, 40) for name in rng.sample(ITEMS, 8)}


def _one(rng):
    prices = _prices(rng)
    return {"prices": prices, "item": rng.choice(sorted(prices))}


def _order(rng):
    return {**_one(rng), "quantity": rng.randint(2, 9)}


def _basket(rng):
    prices = _prices(rng)
    return {"prices": prices, "items": rng.sample(sorted(prices), rng.randint(2, 5))}


def _pair(rng):
    prices = _prices(rng)
    return {"prices": prices, "items": rng.sample(sorted(prices), 2)}


# the last class is held out (never trained on): its task is new, its tools are the ones training used
ORACLES = {
    ItemPriceEnv: oracle_item_price,
    OrderCostEnv: oracle_order_cost,
    BasketTotalEnv: oracle_basket_total,
    PriceDifferenceEnv: oracle_price_difference,
    PairCostEnv: oracle_pair_cost,
}
CONFIGS = {
    ItemPriceEnv: _one,
    OrderCostEnv: _order,
    BasketTotalEnv: _basket,
    PriceDifferenceEnv: _pair,
    PairCostEnv: _pair,
}

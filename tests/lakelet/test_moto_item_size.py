"""lakelet/stack/moto_speedups.py sizes an item for a Query page's 1 MB check exactly as moto's ``Item.size`` does,
without moto's DynamoType.size (which copies every map member) for the usual kinds of values."""

from __future__ import annotations

import random
from typing import Any

import pytest
from moto.dynamodb.models.dynamo_type import DynamoType, Item

from lakelet.stack import moto_speedups


def _value(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    kinds = ["S", "N", "BOOL", "NULL", "SS", "NS", "B", "BS"] + (["M", "L"] if depth < 3 else [])
    kind = rng.choice(kinds)
    text = "".join(rng.choice("aé☃/ ") for _ in range(rng.randint(0, 12)))
    if kind == "S":
        return {"S": text}
    if kind == "N":
        return {"N": str(rng.uniform(-1e6, 1e6))}
    if kind == "BOOL":
        return {"BOOL": rng.random() < 0.5}
    if kind == "NULL":
        return {"NULL": True}
    if kind == "SS":
        return {"SS": [text + str(i) for i in range(rng.randint(1, 4))]}
    if kind == "NS":
        return {"NS": [str(i * 7) for i in range(rng.randint(1, 4))]}
    if kind == "B":
        return {"B": text.encode()}
    if kind == "BS":
        return {"BS": [bytes([i]) * i for i in range(1, rng.randint(2, 5))]}
    if kind == "M":
        return {"M": {f"k{i}{text}": _value(rng, depth + 1) for i in range(rng.randint(0, 4))}}
    return {"L": [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]}


def _item(rng: random.Random) -> Item:
    attributes = {"h": {"S": "p"}, "r": {"S": "x"}}
    attributes.update({f"a{i}é": _value(rng) for i in range(rng.randint(0, 8))})
    return Item(DynamoType({"S": "p"}), DynamoType({"S": "x"}), attributes)


@pytest.mark.parametrize("seed", range(5))
def test_the_size_moto_gives(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(200):
        item = _item(rng)
        assert moto_speedups._item_size(item) == item.size()


def test_a_staged_row_s_kinds_never_reach_moto_s_size(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = [0]
    original = DynamoType.size

    def counted(self: DynamoType) -> int:
        calls[0] += 1
        return original(self)

    row = Item(
        DynamoType({"S": "p"}),
        DynamoType({"S": "key"}),
        {
            "p": {"S": "p"},
            "k": {"S": "key"},
            "size": {"N": "12"},
            "meta": {"M": {"a": {"S": "b"}, "tags": {"L": [{"S": "x"}, {"N": "1"}]}}},
        },
    )
    expected = row.size()
    monkeypatch.setattr(DynamoType, "size", counted)
    assert moto_speedups._item_size(row) == expected
    assert calls[0] == 0

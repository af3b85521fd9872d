"""Hash splits against the published SHA-256 test vectors."""

from __future__ import annotations

from chemgauge.eval.splits import SPLIT_PROTOCOL_VERSION, assign_split, split_bucket


def test_bucket_of_known_digests() -> None:
    # SHA-256("") starts e3b0c442; SHA-256("abc") starts ba7816bf (FIPS 180-2 vectors).
    assert split_bucket("") == 0xE3B0C442 % 100 == 10
    assert split_bucket("abc") == 0xBA7816BF % 100 == 19
    assert assign_split("abc") == "train"


def test_cutoffs_and_stability() -> None:
    keys = [f"group-{i}" for i in range(3000)]
    splits = [assign_split(k) for k in keys]
    for key, split in zip(keys, splits, strict=True):
        bucket = split_bucket(key)
        assert split == ("train" if bucket < 70 else "val" if bucket < 85 else "test")
    share = splits.count("train") / len(splits)
    assert 0.66 < share < 0.74
    # Adding data never moves an old item.
    assert [assign_split(k) for k in keys[:100]] == splits[:100]
    assert SPLIT_PROTOCOL_VERSION == 1

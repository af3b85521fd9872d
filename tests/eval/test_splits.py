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
    assert SPLIT_PROTOCOL_VERSION == 1


# Keys at each cut, their SHA-256 prefixes checked by hand with `sha256sum`
# (0xed1be1cd = 3,978,027,469, mod 100 = 69; 0x10a1ca6a = 279,038,570 -> 70; ...): an
# off-by-one at a boundary, a little-endian read or a different hash moves one of them.
BOUNDARIES = {
    "group-2": (0, "train"),
    "group-136": (69, "train"),
    "group-80": (70, "val"),
    "group-41": (84, "val"),
    "group-44": (85, "test"),
    "group-103": (99, "test"),
}


def test_the_cuts_fall_on_the_hand_checked_buckets() -> None:
    for key, (bucket, split) in BOUNDARIES.items():
        assert split_bucket(key) == bucket, key
        assert assign_split(key) == split, key

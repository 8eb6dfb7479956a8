import importlib.metadata

import mintid


def test_version_matches_the_distribution() -> None:
    assert mintid.__version__ == importlib.metadata.version("mintid")


def test_the_native_library_answers() -> None:
    assert mintid.base32_encode_u64(0) == "0000000000000"
    assert mintid.base32_encode_u64(2**64 - 1) == "FZZZZZZZZZZZZ"

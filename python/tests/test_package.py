import importlib.metadata
import uuid

import mintid


def test_version_matches_the_distribution() -> None:
    assert mintid.__version__ == importlib.metadata.version("mintid")


def test_every_public_name_exists() -> None:
    for name in mintid.__all__:
        assert hasattr(mintid, name), name


def test_the_native_library_answers() -> None:
    assert isinstance(mintid.uuid7(), uuid.UUID)
    assert mintid.Snowflake(worker=1).next_id() > 0


def test_the_core_version_is_the_package_version() -> None:
    # One version for every mintid package (Cargo.toml's [workspace.package]).
    assert mintid.core_version() == mintid.__version__

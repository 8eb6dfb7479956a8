import ast
import importlib
import importlib.metadata
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

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


# What `import mintid` must not import: the native library and its generated
# bindings, every submodule, and the heavier standard modules they use.
HEAVY_MODULES = [
    "mintid._ffi",
    "mintid._ffi.mintid_ffi",
    "mintid._native",
    "mintid._uuid",
    "mintid._snowflake",
    "mintid._record",
    "mintid.errors",
    "mintid.store",
    "mintid.http",
    "mintid.metrics",
    "opentelemetry",
    "ctypes",
    "dataclasses",
    "enum",
    "importlib.metadata",
    "typing",
]


def _modules_after(code: str) -> set[str]:
    listing = subprocess.run(
        [sys.executable, "-I", "-c", f"{code}; import sys; print(' '.join(sys.modules))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(listing.split())


def test_import_mintid_imports_nothing_heavy() -> None:
    assert _modules_after("import mintid") & set(HEAVY_MODULES) == set()


def test_a_public_name_imports_its_module_on_first_use() -> None:
    loaded = _modules_after("import mintid; mintid.SnowflakeLayout")
    assert {"mintid._snowflake", "mintid._ffi.mintid_ffi"} <= loaded
    assert "mintid._record" not in loaded
    assert "mintid.store" not in loaded


# What a program's first ID must not import (the cold start of a serverless function or
# a CLI): the generated bindings and the standard modules only the wide API needs. The
# light loader (mintid._library, ctypes) opens the library instead.
FIRST_ID_HEAVY = [
    "mintid._ffi",
    "mintid._ffi.mintid_ffi",
    "mintid.errors",
    "mintid._uuid",
    "mintid._snowflake",
    "mintid._policy",
    "dataclasses",
    "datetime",
    "enum",
    "typing",
    "uuid",
]


@pytest.mark.parametrize(
    "code",
    [
        "import mintid; mintid.uuid7_str()",
        "from mintid import Snowflake; Snowflake(worker=1).next_id()",
        "from mintid import Snowflake; Snowflake(worker=1).next_ids(3)",
        "import mintid; mintid.Uuid7Generator().next_str()",
    ],
)
def test_the_first_id_loads_no_generated_bindings(code: str) -> None:
    loaded = _modules_after(code)
    assert "mintid._library" in loaded
    assert loaded & set(FIRST_ID_HEAVY) == set()


def test_the_first_uuid_object_loads_only_the_uuid_module_more() -> None:
    loaded = _modules_after("import mintid; mintid.uuid7()")
    # uuid.UUID is the answer's type; the uuid module imports enum.
    assert "uuid" in loaded
    assert loaded & set(FIRST_ID_HEAVY) <= {"uuid", "enum"}


def _type_checking_imports() -> list[str]:
    """The modules that the ``if TYPE_CHECKING:`` block of ``mintid/__init__.py``
    imports every public name of (``from M import *``).
    """
    tree = ast.parse(Path(mintid.__file__).read_text())
    (block,) = (node for node in tree.body if isinstance(node, ast.If))
    return [
        node.module
        for node in block.body
        if isinstance(node, ast.ImportFrom) and node.module and node.names[0].name == "*"
    ]


def test_the_lazy_names_are_the_type_checked_names() -> None:
    # Every name a type checker sees in mintid is there at run time, the same object.
    expected = {"__version__", "core_version"}
    for module_name in _type_checking_imports():
        module = importlib.import_module(module_name)
        for name in module.__all__:
            assert getattr(mintid, name) is getattr(module, name), name
        expected |= set(module.__all__)
    assert set(mintid.__all__) == expected
    assert set(dir(mintid)) >= expected


def test_a_missing_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = mintid.no_such_name  # type: ignore[attr-defined]
    assert mintid.errors.MintidError is mintid.MintidError

"""Public names imported when first used (PEP 562), for a fast ``import mintid``.

A package's ``__init__`` lists which private module defines each public name
and hands the list to :func:`attach`; the returned ``__getattr__`` imports the
module on the first access of one of its names (``mintid.uuid7``, ``from mintid
import uuid7``) and keeps the value in the package, so later accesses are plain
attribute reads. Importing the package itself imports none of them: not the
native library, not the generated bindings, not ``dataclasses`` or ``enum``.

Type checkers see ordinary imports instead (the ``if TYPE_CHECKING:`` block of
the package's ``__init__``); ``tests/test_package.py`` checks that both agree.
"""

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import ModuleType

__all__ = ["attach"]


def attach(
    package: str,
    exports: "Mapping[str, str]",
    *,
    star: str,
    computed: "Mapping[str, tuple[str, str]]",
) -> "tuple[Callable[[str], object], Callable[[], list[str]]]":
    """The ``__getattr__`` and ``__dir__`` of ``package`` (PEP 562).

    ``exports`` maps each submodule (its full name) to the public names it
    defines, separated by spaces; ``star`` names one more submodule whose whole
    ``__all__`` is public (one whose names are only known once it is imported,
    as :mod:`mintid.errors` derives its classes from the core); ``computed``
    maps further names to the module and function computing the value on
    first access (``"__version__"``). A public
    submodule (``mintid.errors``) is an attribute too, imported on first access.
    ``__all__`` is computed: every name above.
    """
    namespace = sys.modules[package].__dict__
    where = {name: module for module, names in exports.items() for name in names.split()}
    prefix = package + "."

    def public() -> list[str]:
        return [*where, *computed, *_module(star).__all__]

    def __getattr__(name: str) -> object:  # noqa: N807
        module = where.get(name)
        if module is not None:
            value = getattr(_module(module), name)
        elif name in computed:
            module, function = computed[name]
            value = getattr(_module(module), function)()
        elif name == "__all__":
            value = public()
        elif name.startswith("_"):
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        elif name in _module(star).__all__:
            value = getattr(_module(star), name)
        else:
            try:
                value = _module(prefix + name)
            except ModuleNotFoundError as error:
                if error.name != prefix + name:
                    raise
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807
        return sorted({*namespace, *public()})

    return __getattr__, __dir__


def _module(name: str) -> "ModuleType":
    __import__(name)
    return sys.modules[name]

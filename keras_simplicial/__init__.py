"""The 2-simplicial Transformer (Clift et al.) as Keras 3 layers.

The layers load on first use (``keras_simplicial.SimplicialAttention``, ``from keras_simplicial
import ...``), so that ``import keras_simplicial.envs`` loads neither Keras nor TensorFlow.

Keras finds the custom class of a saved layer (``keras.models.load_model``) only if the module that
registered it (``@keras.saving.register_keras_serializable``) has been imported: by name it imports
modules of its own packages only (``_retrieve_class_or_fn`` in keras/src/saving/
serialization_lib.py). So once ``keras_simplicial`` is imported, the layer modules are imported
with Keras: at once if Keras is loaded already, otherwise by `_KerasImportHook` as soon as anything
imports it (``import keras``, ``import keras.ops``, ``import tensorflow``), or once the layer
module that imported it has finished.
"""

import contextlib
import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

__version__ = "0.1.0"

# Each public name and the module that defines it.
_LAYERS = {
    "DotProductAttention": "dot_product_attention",
    "SimplicialAttention": "simplicial_attention",
    "TransformerBlock": "blocks",
    "TwoSimplicialTransformerBlock": "blocks",
    "VirtualEntities": "virtual_entities",
    "unsigned_scalar_product": "scalar_product",
}
# The modules that import Keras, each after those it imports.
_MODULES = (
    "_utils",
    "_weight_options",
    "scalar_product",
    "dot_product_attention",
    "simplicial_attention",
    "virtual_entities",
    "blocks",
)

__all__ = sorted(_LAYERS)


def __getattr__(name):
    if name in _LAYERS:
        _register_layers()
        return getattr(sys.modules[f"{__name__}.{_LAYERS[name]}"], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))


def _register_layers():
    """Imports Keras, then the layer modules, which registers the layers with Keras."""
    importlib.import_module("keras")
    for module in _MODULES:
        importlib.import_module(f"{__name__}.{module}")


def _loading():
    """Whether one of the layer modules is being imported: in `sys.modules`, not yet bound here."""
    return any(f"{__name__}.{m}" in sys.modules and m not in globals() for m in _MODULES)


# Set while the module that first imported Keras is a layer module, still half run: the others
# import names from it, so they wait until the import system binds it here (it has finished).
_deferred = False


def _register_after_keras():
    """Registers the layers once Keras has loaded, or once the layer module importing it has."""
    global _deferred
    _deferred = _loading()
    if not _deferred:
        try:
            _register_layers()
        except Exception as error:  # Keras itself works; the layers report it on first use
            warnings.warn(f"keras_simplicial: the layers did not import: {error!r}", stacklevel=2)


class _Package(types.ModuleType):
    """The class of this package's module, to see its submodules bound when they have loaded."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if _deferred and name in _MODULES:
            _register_after_keras()


class _KerasImportHook(importlib.abc.MetaPathFinder):
    """Runs `_register_after_keras` right after the top-level ``keras`` module has executed.

    It answers only for ``keras``, with the spec the other finders give, its loader wrapped; then
    it leaves ``sys.meta_path``. If Keras fails to import, its error is raised as without the hook,
    and the hook stays for a next try.
    """

    def __init__(self):
        self._searching = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "keras" or self._searching:
            return None
        self._searching = True  # importlib.util.find_spec asks this finder too
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._searching = False
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader, self)
        return spec


class _RegisteringLoader(importlib.abc.Loader):
    """Keras's own loader, then `_register_after_keras`."""

    def __init__(self, loader, hook):
        self._loader = loader
        self._hook = hook

    def __getattr__(self, name):  # get_source, get_resource_reader, ... for who asks find_spec
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = module.__spec__.loader = self._loader  # Keras keeps its own loader
        self._loader.exec_module(module)
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self._hook)
        _register_after_keras()


sys.modules[__name__].__class__ = _Package
if sys.modules.get("keras") is not None:
    _register_after_keras()
elif not any(isinstance(finder, _KerasImportHook) for finder in sys.meta_path):
    sys.meta_path.insert(0, _KerasImportHook())

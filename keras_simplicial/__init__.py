"""The 2-simplicial Transformer (Clift et al.) as Keras 3 layers."""

__version__ = "0.1.0"

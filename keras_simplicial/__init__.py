"""The 2-simplicial Transformer (Clift et al.) as Keras 3 layers."""

from keras_simplicial.blocks import TransformerBlock, TwoSimplicialTransformerBlock
from keras_simplicial.dot_product_attention import DotProductAttention
from keras_simplicial.scalar_product import unsigned_scalar_product
from keras_simplicial.simplicial_attention import SimplicialAttention
from keras_simplicial.virtual_entities import VirtualEntities

__version__ = "0.1.0"

__all__ = [
    "DotProductAttention",
    "SimplicialAttention",
    "TransformerBlock",
    "TwoSimplicialTransformerBlock",
    "VirtualEntities",
    "unsigned_scalar_product",
]

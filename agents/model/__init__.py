"""The agents of Section 5.1: their Keras 3 models, their RLlib wrapper and their attention.

architecture.py     build_agent_model: the relational and the simplicial agent
model_config.py     the model config split into architecture overrides and jit_compile
rllib_model.py      KerasAgentModel: an agent model as an RLlib TFModelV2
attention_agent.py  AttentionAgent: an agent model that also returns its attention
entities.py         which board tile each entity stands for (Section 6.1)
"""

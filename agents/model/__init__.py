"""The agents of Section 4.1: their Keras 3 models, their RLlib wrapper and their attention.

architecture.py     build_agent_model: the relational and the simplicial agent
model_config.py     the model config split into architecture overrides and jit_compile
rllib_model.py      KerasAgentModel: an agent model as an RLlib TFModelV2 (old API stack)
torch_rl_module.py  KerasAgentRLModule: an agent model as an RLlib TorchRLModule (new API stack)
module_state.py     the Keras weights in a KerasAgentRLModule's state, read on any backend
model_parts.py      the part of the model each variable belongs to (per-part gradient norms)
attention_agent.py  AttentionAgent: an agent model that also returns its attention
entities.py         which board tile each entity stands for (Section 6.1)
"""

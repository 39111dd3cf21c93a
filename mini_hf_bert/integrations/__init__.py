"""Functions that plug into the shared machinery by name, as transformers' ``integrations/``:
an attention implementation registers in ``modeling_utils.ALL_ATTENTION_FUNCTIONS``."""

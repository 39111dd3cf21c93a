"""mini_hf_bert: a source-annotated BERT that mirrors HuggingFace transformers' class
hierarchy, loads the real checkpoints, and is tested to compute the same numbers.

Start reading at ``modeling_bert.py``.
"""

from .checkpoints import CheckpointError
from .checkpoints.bundled import chinese_checkpoint_dir, default_checkpoint_dir
from .configuration_bert import BertConfig, ConfigError
from . import modeling_bert_fast  # noqa: F401  registers attn_implementation="fast" (ALL_MODEL_FORWARDS)
from .modeling_bert import (
    BertAttention,
    BertEmbeddings,
    BertEncoder,
    BertForMaskedLM,
    BertForMultipleChoice,
    BertForNextSentencePrediction,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertIntermediate,
    BertLayer,
    BertLMHeadModel,
    BertLMPredictionHead,
    BertModel,
    BertOnlyMLMHead,
    BertOnlyNSPHead,
    BertOutput,
    BertPooler,
    BertPredictionHeadTransform,
    BertPreTrainedModel,
    BertPreTrainingHeads,
    BertSelfAttention,
    BertSelfOutput,
)
from .modeling_outputs import (
    BaseModelOutputWithPastAndCrossAttentions,
    BaseModelOutputWithPoolingAndCrossAttentions,
    ModelOutput,
)
from .activations import ACT2FN
from .auto import (
    AutoConfig,
    AutoModel,
    AutoModelForCausalLM,
    AutoModelForMaskedLM,
    AutoModelForMultipleChoice,
    AutoModelForNextSentencePrediction,
    AutoModelForPreTraining,
    AutoModelForQuestionAnswering,
    AutoModelForSequenceClassification,
    AutoModelForTokenClassification,
    AutoTokenizer,
)
from .masking_utils import get_extended_attention_mask
from .modeling_utils import PreTrainedModel
from .pytorch_utils import apply_chunking_to_forward
from .pipelines.sentence_embeddings import encode_sentences
from .pipelines import (
    FeatureExtractionPipeline,
    FillMaskPipeline,
    Pipeline,
    QuestionAnsweringPipeline,
    SentenceSimilarityPipeline,
    TextClassificationPipeline,
    TokenClassificationPipeline,
    pipeline,
)

__version__ = "0.1.0"

from .tokenization_bert import (
    AddedToken,
    BasicTokenizer,
    BertTokenizer,
    TokenizerFileError,
    WordpieceTokenizer,
)

__all__ = [
    "chinese_checkpoint_dir",
    "default_checkpoint_dir",
    "AddedToken",
    "BasicTokenizer",
    "BertTokenizer",
    "TokenizerFileError",
    "WordpieceTokenizer",
    "ACT2FN",
    "AutoConfig",
    "AutoModel",
    "AutoModelForCausalLM",
    "AutoModelForMaskedLM",
    "AutoModelForMultipleChoice",
    "AutoModelForNextSentencePrediction",
    "AutoModelForPreTraining",
    "AutoModelForQuestionAnswering",
    "AutoModelForSequenceClassification",
    "AutoModelForTokenClassification",
    "AutoTokenizer",
    "BaseModelOutputWithPastAndCrossAttentions",
    "BaseModelOutputWithPoolingAndCrossAttentions",
    "BertAttention",
    "BertConfig",
    "BertEmbeddings",
    "BertEncoder",
    "BertForMaskedLM",
    "BertForMultipleChoice",
    "BertForNextSentencePrediction",
    "BertForPreTraining",
    "BertForQuestionAnswering",
    "BertForSequenceClassification",
    "BertForTokenClassification",
    "BertLMHeadModel",
    "BertLMPredictionHead",
    "BertOnlyMLMHead",
    "BertOnlyNSPHead",
    "BertPredictionHeadTransform",
    "BertPreTrainingHeads",
    "BertIntermediate",
    "BertLayer",
    "BertModel",
    "BertOutput",
    "BertPooler",
    "BertPreTrainedModel",
    "BertSelfAttention",
    "BertSelfOutput",
    "CheckpointError",
    "ConfigError",
    "ModelOutput",
    "PreTrainedModel",
    "apply_chunking_to_forward",
    "get_extended_attention_mask",
    "FeatureExtractionPipeline",
    "FillMaskPipeline",
    "Pipeline",
    "QuestionAnsweringPipeline",
    "SentenceSimilarityPipeline",
    "TextClassificationPipeline",
    "TokenClassificationPipeline",
    "pipeline",
    "encode_sentences",
]

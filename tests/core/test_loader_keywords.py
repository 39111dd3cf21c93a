"""Every keyword transformers' loaders and savers take has a row in hub_options.KEYWORDS,
read from transformers' own signatures and bodies at run time (5.x here;
tests_transformers4/test_loader_keywords_4x.py runs the same against 4.57.6), and each is
taken by our counterpart: accepted at transformers' default value, and, where the row says
it is refused when set, refused in one error naming it."""

from __future__ import annotations

import ast
import inspect
import re

import pytest
import transformers

import mini_hf_bert
from mini_hf_bert.hub_options import HONOURED, KEYWORDS, NO_EFFECT, REFUSED_WHEN_SET

from ..conftest import small_config_kwargs

#: transformers' positional parameters and catch-alls, which are not keywords a caller names.
NOT_KEYWORDS = {"self", "cls", "kwargs", "model_args", "inputs", "init_inputs", "pretrained_model_name_or_path",
                "save_directory"}
_POPPED = re.compile(r"kwargs\.(?:pop|get)\(\s*\"(\w+)\"\s*(?:,\s*([^)\n]*))?\)")


def transformers_loaders(module) -> dict[str, object]:
    """The loaders and savers whose keywords code written for transformers passes."""
    from transformers.tokenization_utils_base import PreTrainedTokenizerBase

    return {
        "model.from_pretrained": module.PreTrainedModel.from_pretrained,
        "model.save_pretrained": module.PreTrainedModel.save_pretrained,
        "config.from_pretrained": module.PretrainedConfig.from_pretrained,
        "config._get_config_dict": module.PretrainedConfig._get_config_dict,
        "config.save_pretrained": module.PretrainedConfig.save_pretrained,
        "AutoConfig.from_pretrained": module.AutoConfig.from_pretrained,
        "AutoTokenizer.from_pretrained": module.AutoTokenizer.from_pretrained,
        "tokenizer.from_pretrained": PreTrainedTokenizerBase.from_pretrained,
        "tokenizer.save_pretrained": PreTrainedTokenizerBase.save_pretrained,
    }


def keywords_and_defaults(function) -> dict[str, object]:
    """A transformers function's keywords -> their default: its signature's, and those its
    body pops from ``kwargs`` (a default that is no literal counts as None)."""
    found = {}
    for name, parameter in inspect.signature(function).parameters.items():
        if name not in NOT_KEYWORDS:
            found[name] = None if parameter.default is inspect.Parameter.empty else parameter.default
    for name, default in _POPPED.findall(inspect.getsource(function)):
        if name not in found:
            try:
                found[name] = ast.literal_eval(default) if default else None
            except (ValueError, SyntaxError):
                found[name] = None
    return found


def missing_rows(table: dict, module) -> list[str]:
    return sorted({name for function in transformers_loaders(module).values()
                   for name in keywords_and_defaults(function) if name not in table})


def test_every_keyword_of_transformers_loaders_and_savers_has_a_row():
    assert missing_rows(KEYWORDS, transformers) == []
    assert {status for status, _ in KEYWORDS.values()} == {HONOURED, NO_EFFECT, REFUSED_WHEN_SET}


@pytest.mark.parametrize("name", ["token", "_from_auto", "quantization_config", "legacy_format"])
def test_a_row_removed_from_the_table_is_found(name):
    assert missing_rows({k: v for k, v in KEYWORDS.items() if k != name}, transformers) == [name]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A small model, its config and a tokenizer, saved: what our loaders read here."""
    directory = tmp_path_factory.mktemp("saved")
    model = mini_hf_bert.BertLMHeadModel(mini_hf_bert.BertConfig(**small_config_kwargs("tiny"), is_decoder=True))
    model.save_pretrained(directory)
    (directory / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]) + "\n")
    return str(directory)


def ours(loader: str, saved: str, tmp_path):
    """Our counterpart of a transformers loader, as a function of its keywords."""
    model = mini_hf_bert.BertLMHeadModel.from_pretrained(saved)
    return {
        "model.from_pretrained": lambda **kw: mini_hf_bert.BertLMHeadModel.from_pretrained(saved, **kw),
        "model.save_pretrained": lambda **kw: model.save_pretrained(tmp_path / "model", **kw),
        "config.from_pretrained": lambda **kw: mini_hf_bert.BertConfig.from_pretrained(saved, **kw),
        "config._get_config_dict": lambda **kw: mini_hf_bert.BertConfig.from_pretrained(saved, **kw),
        "config.save_pretrained": lambda **kw: model.config.save_pretrained(tmp_path / "config", **kw),
        "AutoConfig.from_pretrained": lambda **kw: mini_hf_bert.AutoConfig.from_pretrained(saved, **kw),
        "AutoTokenizer.from_pretrained": lambda **kw: mini_hf_bert.AutoTokenizer.from_pretrained(saved, **kw),
        "tokenizer.from_pretrained": lambda **kw: mini_hf_bert.BertTokenizer.from_pretrained(saved, **kw),
        "tokenizer.save_pretrained": lambda **kw: mini_hf_bert.BertTokenizer.from_pretrained(saved).save_pretrained(
            tmp_path / "tokenizer", **kw),
    }[loader]


#: Keywords whose transformers default names something only transformers has.
OWN_DEFAULTS = {"_configuration_file": None, "save_function": None, "max_shard_size": "50GB",
                "generation_config": None, "config": None, "state_dict": None}


def check_every_keyword(module, loader: str, saved: str, tmp_path) -> None:
    """Our counterpart of ``module``'s ``loader`` takes each of its keywords at ``module``'s
    default, and refuses a refused-when-set one, set, in one error naming it."""
    call = ours(loader, saved, tmp_path)
    for name, default in keywords_and_defaults(transformers_loaders(module)[loader]).items():
        value = OWN_DEFAULTS.get(name, default)
        try:
            call(**{name: value})
        except Exception as e:  # noqa: BLE001 - any refusal of a default is the failure reported
            pytest.fail(f"{loader}: {name}={value!r} (transformers {module.__version__}'s default) is refused: "
                        f"{type(e).__name__}: {e}")
        if KEYWORDS[name][0] == REFUSED_WHEN_SET:
            with pytest.raises(ValueError, match=rf"{name}='set' cannot be honoured here: "):
                call(**{name: "set"})


@pytest.mark.parametrize("loader", list(transformers_loaders(transformers)))
def test_our_counterpart_takes_every_keyword_and_refuses_the_refused_ones_when_set(loader, saved, tmp_path):
    check_every_keyword(transformers, loader, saved, tmp_path)

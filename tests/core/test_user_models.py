"""Users' own models on this library's ``PreTrainedModel``, as transformers 5.x's tests build
them on its own (tests/utils/test_modeling_utils.py's ``BaseModel``, ``ModelWithHead``,
``BaseModelWithTiedWeights``...): ties declared as 5.x declares them (target -> source, a
module name standing for its parameters), saved once, loaded symmetrically, kept or undone
as the checkpoint says, and a head checkpoint loaded into its base. Each case runs the same
toy classes on transformers and on mini_hf_bert and compares what each reports."""

from __future__ import annotations

import os

import pytest
import torch
import transformers
from safetensors.torch import save_file
from torch import nn

import mini_hf_bert
from mini_hf_bert.modeling_utils import PreTrainedModel


def _classes(library: str) -> dict[str, type]:
    """The toy models, built on one library's PreTrainedModel and config."""
    if library == "transformers":
        base_class, config_class = transformers.PreTrainedModel, transformers.PreTrainedConfig
    else:
        base_class, config_class = PreTrainedModel, mini_hf_bert.BertConfig

    class Base(base_class):
        base_model_prefix = "base"

        def __init__(self, config):
            super().__init__(config)
            self.linear, self.linear_2 = nn.Linear(5, 5), nn.Linear(5, 5)
            self.post_init()

        def forward(self, x):
            return self.linear_2(self.linear(x))

    class Tied(Base):
        _tied_weights_keys = {"linear_2.weight": "linear.weight"}

    class ThreeTied(base_class):  # two targets, one source
        _tied_weights_keys = {"linear_2.weight": "linear.weight", "linear_3.weight": "linear.weight"}

        def __init__(self, config):
            super().__init__(config)
            self.linear, self.linear_2, self.linear_3 = nn.Linear(5, 5), nn.Linear(5, 5), nn.Linear(5, 5)
            self.post_init()

    class ModuleTied(base_class):  # a module name: both its weight and its bias are tied
        _tied_weights_keys = {"out": "proj"}

        def __init__(self, config):
            super().__init__(config)
            self.proj, self.out = nn.Linear(5, 5), nn.Linear(5, 5)
            self.post_init()

    class Head(base_class):
        base_model_prefix = "base"

        def __init__(self, config):
            super().__init__(config)
            self.base = Base(config)
            self.linear, self.linear2 = nn.Linear(5, 5), nn.Linear(5, 5)  # "linear" as the base's, on purpose
            self.post_init()

    class HeadTied(base_class):
        base_model_prefix = "base"
        _tied_weights_keys = {"decoder.weight": "base.linear.weight"}

        def __init__(self, config):
            super().__init__(config)
            self.base = Base(config)
            self.decoder = nn.Linear(5, 5)
            self.post_init()

    class ChainTied(ThreeTied):  # a tie to a tied weight, as upstream's "mixed" model declares it
        _tied_weights_keys = {"linear_2.weight": "linear.weight", "linear_3.weight": "linear_2.weight"}

    for cls in (Base, Tied, ThreeTied, ChainTied, ModuleTied, Head, HeadTied):
        cls.config_class = config_class
    return {"Base": Base, "Tied": Tied, "ThreeTied": ThreeTied, "ChainTied": ChainTied, "ModuleTied": ModuleTied,
            "Head": Head, "HeadTied": HeadTied, "config": lambda: config_class(tie_word_embeddings=True)}


LIBRARIES = ("transformers", "mini_hf_bert")


def _save(model, directory, drop=(), change=None) -> str:
    """The model's config and weights, every tensor cloned (nothing shared), some dropped or changed."""
    os.makedirs(directory, exist_ok=True)
    model.config.save_pretrained(directory)
    state = {k: v.detach().clone() for k, v in model.state_dict().items() if k not in drop}
    if change:
        state[change] = state[change] + 2
    save_file(state, os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})
    return str(directory)


def _tied(model, *names) -> bool:
    parameters = [model.get_parameter(name) for name in names]
    return all(p is parameters[0] for p in parameters)


@pytest.mark.parametrize("case", ["similar", "different", "source dropped", "two of three dropped", "module"])
def test_ties_load_as_transformers(tmp_path, case):
    outcomes = {}
    for library in LIBRARIES:
        toys = _classes(library)
        name = {"two of three dropped": "ThreeTied", "module": "ModuleTied"}.get(case, "Tied")
        model = toys[name](toys["config"]())
        drop = {"source dropped": ("linear.weight",), "two of three dropped": ("linear.weight", "linear_2.weight"),
                "module": ("proj.weight", "proj.bias")}.get(case, ())
        path = _save(model, tmp_path / library, drop=drop, change="linear_2.weight" if case == "different" else None)
        loaded, info = toys[name].from_pretrained(path, output_loading_info=True)
        names = {"ThreeTied": ["linear.weight", "linear_2.weight", "linear_3.weight"],
                 "ModuleTied": ["proj.weight", "out.weight"]}.get(name, ["linear.weight", "linear_2.weight"])
        outcomes[library] = (info["missing_keys"], _tied(model, *names), _tied(loaded, *names),
                             case != "module" or _tied(loaded, "proj.bias", "out.bias"))
        if case != "different":
            assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), loaded.state_dict().values()))
    assert outcomes["mini_hf_bert"] == outcomes["transformers"]
    assert outcomes["mini_hf_bert"][2] == (case != "different")  # tied, unless the file holds two different values


def test_a_tie_to_a_tied_weight_loads_symmetrically(tmp_path):
    """Upstream's "mixed" declaration (linear_3 -> linear_2 -> linear): built tied by both
    libraries; loaded from a file holding linear_3 only, tied and whole here (transformers
    5.23 reports linear.weight missing and initialises it anew)."""
    toys = _classes("mini_hf_bert")
    model = toys["ChainTied"](toys["config"]())
    names = ["linear.weight", "linear_2.weight", "linear_3.weight"]
    assert _tied(model, *names) and _tied(_classes("transformers")["ChainTied"](_classes("transformers")["config"]()), *names)
    path = _save(model, tmp_path, drop=names[:2])
    loaded, info = toys["ChainTied"].from_pretrained(path, output_loading_info=True)
    assert info["missing_keys"] == set() and _tied(loaded, *names)
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), loaded.state_dict().values()))


def test_ties_save_once_and_reload_into_a_head(tmp_path):
    outcomes = {}
    for library in LIBRARIES:
        toys = _classes(library)
        model = toys["Tied"](toys["config"]())
        model.save_pretrained(tmp_path / library / "tied")
        again = toys["Tied"].from_pretrained(tmp_path / library / "tied")
        toys["Base"](toys["config"]()).save_pretrained(tmp_path / library / "base")
        head, info = toys["HeadTied"].from_pretrained(tmp_path / library / "base", output_loading_info=True)
        outcomes[library] = (_tied(again, "linear.weight", "linear_2.weight"), info["missing_keys"],
                             _tied(head, "base.linear.weight", "decoder.weight"))
    assert outcomes["mini_hf_bert"] == outcomes["transformers"] == (True, {"decoder.bias"}, True)


def test_a_head_checkpoint_loads_into_its_base(tmp_path):
    """A head named like a weight of its base (``linear`` beside ``base.linear``) never
    collides with it: the base gets the base's weights, as with transformers. The head's own
    ``linear`` is reported unused here too (transformers leaves it out of unexpected_keys)."""
    loaded = {}
    for library in LIBRARIES:
        toys = _classes(library)
        model = toys["Head"](toys["config"]())
        model.save_pretrained(tmp_path / library)
        base, info = toys["Base"].from_pretrained(tmp_path / library, output_loading_info=True)
        assert torch.equal(base.linear.weight, model.base.linear.weight) and torch.equal(base.linear_2.bias, model.base.linear_2.bias)
        loaded[library] = info["unexpected_keys"]
    assert loaded["transformers"] == {"linear2.weight", "linear2.bias"}
    assert loaded["mini_hf_bert"] == {"linear2.weight", "linear2.bias", "linear.weight", "linear.bias"}


def test_a_tie_that_names_nothing_is_refused():
    toys = _classes("mini_hf_bert")

    class Wrong(toys["Base"]):
        _tied_weights_keys = {"linear_9": "linear"}

    with pytest.raises(ValueError, match=r"Wrong._tied_weights_keys ties 'linear_9' to 'linear'.*each target needs a source"):
        Wrong(toys["config"]())


def test_untied_config_ties_nothing_on_a_model_without_word_embeddings():
    """transformers 5.x: config.tie_word_embeddings=False disables every declared tie."""
    for library in LIBRARIES:
        toys = _classes(library)
        config = toys["config"]()
        config.tie_word_embeddings = False
        model = toys["Tied"](config)
        assert not _tied(model, "linear.weight", "linear_2.weight"), library

"""The package's layout rules (docs/architecture.md), read from its source: no import
circle, lazy imports included; no module imports a higher layer; the shared machinery
never reaches BERT; the public API keeps every name it has exported."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap

import pytest

from ..paths import ROOT


def _tool():
    spec = importlib.util.spec_from_file_location("import_graph", os.path.join(ROOT, "tools", "import_graph.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


graph_tool = _tool()

#: Every name ``from mini_hf_bert import ...`` offered before the package was regrouped.
PUBLIC_NAMES = (
    "ACT2FN", "AddedToken", "AutoConfig", "AutoModel", "AutoModelForCausalLM", "AutoModelForMaskedLM",
    "AutoModelForMultipleChoice", "AutoModelForNextSentencePrediction", "AutoModelForPreTraining",
    "AutoModelForQuestionAnswering", "AutoModelForSequenceClassification", "AutoModelForTokenClassification",
    "AutoTokenizer", "BaseModelOutputWithPastAndCrossAttentions", "BaseModelOutputWithPoolingAndCrossAttentions",
    "BasicTokenizer", "BertAttention", "BertConfig", "BertEmbeddings", "BertEncoder", "BertForMaskedLM",
    "BertForMultipleChoice", "BertForNextSentencePrediction", "BertForPreTraining", "BertForQuestionAnswering",
    "BertForSequenceClassification", "BertForTokenClassification", "BertIntermediate", "BertLMHeadModel",
    "BertLMPredictionHead", "BertLayer", "BertModel", "BertOnlyMLMHead", "BertOnlyNSPHead", "BertOutput",
    "BertPooler", "BertPreTrainedModel", "BertPredictionHeadTransform", "BertPreTrainingHeads", "BertSelfAttention",
    "BertSelfOutput", "BertTokenizer", "CheckpointError", "ConfigError", "FeatureExtractionPipeline",
    "FillMaskPipeline", "ModelOutput", "Pipeline", "PreTrainedModel", "QuestionAnsweringPipeline",
    "SentenceSimilarityPipeline", "TextClassificationPipeline", "TokenClassificationPipeline", "TokenizerFileError",
    "WordpieceTokenizer", "apply_chunking_to_forward", "encode_sentences", "get_extended_attention_mask", "pipeline",
)


@pytest.fixture(scope="module")
def graph():
    return graph_tool.import_graph()


def test_the_package_has_no_import_circle(graph):
    assert graph_tool.cycles(graph) == []


def test_no_module_imports_a_higher_layer_and_every_module_has_one(graph):
    assert graph_tool.layer_violations(graph) == []


def test_the_shared_machinery_never_reaches_a_bert_module(graph):
    for module in graph:
        if graph_tool.layer_of(module) == graph_tool.GENERIC_LAYER:
            reached = {m for m in graph_tool.reachable(graph, module) if graph_tool.layer_of(m) == graph_tool.MODEL_LAYER}
            assert not reached, f"{module} (shared machinery) reaches {sorted(reached)}"


def test_the_deepest_import_chain_is_short(graph):
    chain = graph_tool.deepest_chain(graph)
    assert len(chain) <= graph_tool.MAX_CHAIN_MODULES, " -> ".join(chain)


def test_the_config_file_is_bert_fields_and_imports_no_checkpoint_reader(graph):
    """configuration_bert.py holds BERT's fields on the base class; finding a checkpoint's
    config file is configuration_utils' business (docs/architecture.md says so)."""
    assert graph["mini_hf_bert.configuration_bert"] == {"mini_hf_bert.configuration_utils"}


def test_python_m_runs_the_command_line_module_itself(graph):
    """``python -m mini_hf_bert`` is the parser (__main__.py), one module above the commands."""
    assert graph["mini_hf_bert.__main__"] <= {m for m in graph if m.startswith("mini_hf_bert.commands")}


@pytest.mark.parametrize("plotting", ["mini_hf_bert.training.curves", "mini_hf_bert.companion.fonts"])
def test_a_plotting_helper_reaches_neither_the_converter_nor_the_model(graph, plotting):
    reached = graph_tool.reachable(graph, plotting)
    assert not reached & {"mini_hf_bert.checkpoints.convert", "mini_hf_bert.modeling_bert"}, sorted(reached)


def test_the_deepest_chain_is_the_longest_path(tmp_path):
    graph = _write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\nfrom . import d\n",
        "b.py": "from . import c\n",
        "c.py": "def f():\n    from . import d\n",  # a lazy import counts
        "d.py": "",
    })
    assert graph_tool.deepest_chain(graph) == ["mini_hf_bert.a", "mini_hf_bert.b", "mini_hf_bert.c", "mini_hf_bert.d"]


def test_only_the_command_line_and_users_import_the_public_api(graph):
    importers = sorted(m for m, targets in graph.items() if graph_tool.PACKAGE in targets)
    assert all(graph_tool.layer_of(m) == "command line" for m in importers), importers


def test_every_public_name_is_still_exported():
    import mini_hf_bert

    assert set(PUBLIC_NAMES) <= set(mini_hf_bert.__all__)
    missing = [name for name in PUBLIC_NAMES if not hasattr(mini_hf_bert, name)]
    assert missing == []


def test_every_package_directory_is_a_regular_package():
    """setuptools' ``packages.find`` installs only directories with an ``__init__.py``."""
    for directory, subdirectories, files in os.walk(os.path.join(ROOT, graph_tool.PACKAGE)):
        subdirectories[:] = [d for d in subdirectories if not d.startswith((".", "__pycache__"))]
        if any(name.endswith(".py") for name in files):
            assert "__init__.py" in files, f"{directory} has modules but no __init__.py"


# -------------------------------------------------------------------------------------
# The checker itself: it must see what it is meant to catch
# -------------------------------------------------------------------------------------
def _write_package(root, files: dict[str, str]):
    for relative, source in files.items():
        path = os.path.join(root, graph_tool.PACKAGE, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(source))
    return graph_tool.import_graph(str(root))


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    graph = _write_package(tmp_path, {
        "__init__.py": "",
        "modeling_utils.py": "def f():\n    from .modeling_bert import X\n",
        "modeling_bert.py": "from .modeling_utils import f\nX = 1\n",
    })
    assert graph_tool.cycles(graph) == [["mini_hf_bert.modeling_bert", "mini_hf_bert.modeling_utils"]]


def test_a_circle_through_a_type_checking_import_and_a_subpackage_is_found(tmp_path):
    graph = _write_package(tmp_path, {
        "__init__.py": "",
        "companion/__init__.py": "",
        "companion/demo.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import trace_report\n",
        "companion/trace_report.py": "from ..companion.demo import x\n",
    })
    assert graph_tool.cycles(graph) == [["mini_hf_bert.companion.demo", "mini_hf_bert.companion.trace_report"]]


def test_a_generic_module_importing_the_model_breaks_the_layer_rule(tmp_path):
    graph = _write_package(tmp_path, {
        "__init__.py": "",
        "masking_utils.py": "import mini_hf_bert.configuration_bert\n",
        "configuration_bert.py": "",
        "somewhere_new.py": "",
    })
    problems = graph_tool.layer_violations(graph)
    assert any("masking_utils (shared machinery) imports mini_hf_bert.configuration_bert (BERT)" in p for p in problems)
    assert any(p.startswith("mini_hf_bert.somewhere_new: in no layer") for p in problems)


def test_the_tool_reports_the_layers_and_the_deepest_chain():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "import_graph.py")],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "circles: none" in result.stdout and "layer rule: kept" in result.stdout
    assert "deepest chain (" in result.stdout


def test_the_public_api_names_the_module_of_each_name():
    """README and docs show ``from mini_hf_bert import ...`` for these; the package root's
    EXPORTS table imports each from a real module, where the name lives (the class is
    that module's, not a copy)."""
    import importlib

    import mini_hf_bert

    for module, names in mini_hf_bert.EXPORTS.items():
        assert f"{graph_tool.PACKAGE}.{module}" in graph_tool.package_modules(), module
        imported = importlib.import_module(f"{graph_tool.PACKAGE}.{module}")
        for name in names:
            assert getattr(mini_hf_bert, name) is getattr(imported, name), (module, name)


@pytest.mark.parametrize("doc", ["docs/architecture.md", "docs/zh/architecture.md"])
def test_the_architecture_doc_places_every_module(doc):
    """docs/architecture.md names each module's file in its layer table, so a module
    added, moved or renamed without the doc fails here."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        text = f.read()
    missing = []
    for module, path in graph_tool.package_modules().items():
        relative = os.path.relpath(path, os.path.join(ROOT, graph_tool.PACKAGE)).replace(os.sep, "/")
        if relative.endswith("/__init__.py"):
            continue  # a subpackage is named by its folder
        if f"`{relative}`" not in text and f"`{os.path.basename(relative)}`" not in text:
            missing.append(relative)
    assert missing == [], f"{doc} does not place {missing}"
    for folder in ("checkpoints/", "pipelines/", "training/", "companion/", "parity/", "commands/", "integrations/"):
        assert folder in text, f"{doc} does not name {folder}"


def test_the_readme_links_the_architecture_doc():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    assert "(docs/architecture.md)" in readme and "(docs/zh/architecture.md)" in readme

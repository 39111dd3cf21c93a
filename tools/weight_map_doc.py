"""Write docs/weight_map.md and docs/zh/weight_map.md from the name tables in
mini_hf_bert/checkpoints/weight_map.py and the forms of mini_hf_bert/checkpoints/resolve.py.

    .venv/bin/python tools/weight_map_doc.py

The tables are the only place the names live; these pages print them. A test fails when
a page and the tables disagree (run this script then). The one figure on the pages, how far
KerasHub's masked-LM head is from BertConfig's, is computed here from the committed
KerasHub fixture (tests/fixtures/formats/), so the test recomputes it too.
"""

from __future__ import annotations

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from mini_hf_bert.file_utils import write_text  # noqa: E402

DOC = os.path.join(ROOT, "docs", "weight_map.md")
DOC_ZH = os.path.join(ROOT, "docs", "zh", "weight_map.md")
FORMATS = os.path.join(ROOT, "tests", "fixtures", "formats")


#: The commands that read any form (the same for every one).
COMMANDS = ("model = BertModel.from_pretrained(SRC)", "python -m mini_hf_bert convert SRC DST",
            "python -m mini_hf_bert convert SRC --inspect")
#: The forms from before this page had one section per form: transformers' own files and
#: Google's TF1 checkpoints (resolve.FORMS holds the others).
EARLIER_FORMS = {
    "en": (("transformers (PyTorch)", "config.json, model.safetensors / pytorch_model.bin (or sharded)",
            "transformers save_pretrained", "config.json beside it"),
           ("Google's TF1 checkpoint", "bert_config.json, bert_model.ckpt.index / .data-*, or its .zip",
            "google-research/bert (TF1 Saver)", "bert_config.json beside it")),
    "zh": (("transformers（PyTorch）", "config.json、model.safetensors / pytorch_model.bin（或分片）",
            "transformers save_pretrained", "旁边的 config.json"),
           ("Google 的 TF1 检查点", "bert_config.json、bert_model.ckpt.index / .data-*，或其 .zip",
            "google-research/bert（TF1 Saver）", "旁边的 bert_config.json")),
}
TITLES_ZH = {
    "tf_model_h5": "hub 上的 TensorFlow 权重", "flax_msgpack": "hub 上的 Flax 权重",
    "tf2": "Google 的 TF2 检查点（Model Garden）", "saved_model": "TF Hub SavedModel", "keras_hub": "KerasHub 预设",
}
CONFIG_ZH = {
    "tf_model_h5": "旁边的 config.json", "flax_msgpack": "旁边的 config.json",
    "tf2": "由权重推出；hidden_act='gelu_new'（其代码计算的 tanh GELU）",
    "saved_model": "由权重推出；hidden_act='gelu_new'", "keras_hub": "KerasHub 的 config.json；hidden_act='gelu_new'",
}
#: What each form's section says beside its table.
NOTES = {
    "en": {
        "tf_model_h5": "Each name is the Keras weight name less its model scope (`tf_bert_for_pre_training/`) and "
                       "`:0`. A layer that reuses another's weight stores a copy in its own group (the MLM head holds "
                       "the word embeddings again): the copies must be equal, or the file is refused.",
        "flax_msgpack": "The nested parameter dict, its keys joined by `/`. `FlaxBertModel` keeps the encoder at the "
                        "top; the reader puts it under `bert/`. Arrays past 1 GiB, which Flax splits into chunks, are "
                        "joined again.",
        "tf2": "The names are the variables' own, which the checkpoint's object graph records beside each key "
               "(`encoder/layer_with_weights-4/_attention_layer/_query_dense/kernel/.ATTRIBUTES/VARIABLE_VALUE`). "
               "Attention kernels are per head: `[hidden, heads, head_dim]` (query, key, value) and "
               "`[heads, head_dim, hidden]` (output), so the number of heads is read from the weights. "
               "`save_counter`, optimizer slots and `do_lower_case` are not weights: skipped.",
        "saved_model": "A SavedModel keys its variables by position (`variables/21/.ATTRIBUTES/VARIABLE_VALUE`); "
                       "its object graph names them, with the TF2 names above. The vocabulary is "
                       "`assets/vocab.txt`, the casing the variable `do_lower_case`.",
        "keras_hub": "Keras 3 stores a layer's variables by position (`vars/0`, `vars/1`: kernel then bias, gamma "
                     "then beta) under the layer's path; the first transformer layer is `transformer_encoder`, the "
                     "reader names it `transformer_encoder_0`. The vocabulary is `assets/tokenizer/vocabulary.txt`, "
                     "the casing `lowercase` in KerasHub's `tokenizer.json`.",
    },
    "zh": {
        "tf_model_h5": "每个名字是 Keras 的权重名去掉模型作用域（`tf_bert_for_pre_training/`）和 `:0`。复用别层权重的层会在"
                       "自己的组里再存一份（MLM 头又存了一份词嵌入）：两份必须相等，否则拒绝读取。",
        "flax_msgpack": "嵌套的参数字典，键用 `/` 连起来。`FlaxBertModel` 把编码器放在最外层，读取时放到 `bert/` 下。"
                        "Flax 把超过 1 GiB 的数组拆成块，读取时再拼回。",
        "tf2": "这些是变量自己的名字，检查点的对象图把它们记在每个键旁边"
               "（`encoder/layer_with_weights-4/_attention_layer/_query_dense/kernel/.ATTRIBUTES/VARIABLE_VALUE`）。"
               "注意力的核按头存放：`[hidden, heads, head_dim]`（query、key、value）和 `[heads, head_dim, hidden]`（输出），"
               "所以头数可以从权重读出。`save_counter`、优化器槽和 `do_lower_case` 不是权重，跳过。",
        "saved_model": "SavedModel 按位置给变量编键（`variables/21/.ATTRIBUTES/VARIABLE_VALUE`），它的对象图给出名字，"
                       "与上面 TF2 的名字相同。词表在 `assets/vocab.txt`，大小写设置是变量 `do_lower_case`。",
        "keras_hub": "Keras 3 在层的路径下按位置存放变量（`vars/0`、`vars/1`：先核后偏置，先 gamma 后 beta）；第一个 "
                     "transformer 层叫 `transformer_encoder`，读取时记作 `transformer_encoder_0`。词表在 "
                     "`assets/tokenizer/vocabulary.txt`，大小写设置是 KerasHub `tokenizer.json` 里的 `lowercase`。",
    },
}
WORDS = {
    "en": {"title": "# Weight names: every published form <-> transformers <-> mini_hf_bert",
           "generated": "Generated by `tools/weight_map_doc.py` from `mini_hf_bert/checkpoints/weight_map.py` and "
                        "`resolve.py`; a test fails when this page and the tables disagree.",
           "intro": "Every form below is read without TensorFlow, Keras or JAX (h5py and msgpack, the `formats` "
                    "extra, read the HDF5 and msgpack files). The same commands read each one, SRC being its "
                    "directory, its file or a hub id whose snapshot holds it:",
           "forms": "| form | a directory of it holds | written by | its config |",
           "table": "| transformers / mini_hf_bert | in the file | how |",
           "how": {"as is": "as is", "transpose": "transposed", "merge heads, transpose": "heads merged, transposed",
                   "merge heads": "heads merged", "merge heads, transpose (output side)": "heads merged, transposed"},
           "fixture": "Tested on a tiny BERT its own library wrote (`tests/fixtures/formats/{fixture}/`, "
                      "`tools/format_fixtures.py`), against that library's outputs.",
           "keras": "**A stated difference.** KerasHub's masked-LM head computes the erf GELU with LayerNorm epsilon "
                    "1e-5 in its transform, where its backbone computes the tanh GELU with 1e-12; `BertConfig` has one "
                    "activation and one epsilon for both (as transformers' has), so mini_hf_bert computes the head with "
                    "the backbone's. On the fixture the masked-LM logits differ from KerasHub's by {diff} at most; "
                    "the encoder's outputs agree within 1e-5, and KerasHub's head formula over the weights read gives "
                    "its logits within 1e-5 (`test_keras_hub_mlm_head_differs_only_in_its_activation_and_epsilon`)."},
    "zh": {"title": "# 权重名：各种发布形式 <-> transformers <-> mini_hf_bert",
           "generated": "由 `tools/weight_map_doc.py` 根据 `mini_hf_bert/checkpoints/weight_map.py` 和 `resolve.py` "
                        "生成；本页与对照表不一致时测试会失败。",
           "intro": "下面每种形式都不需要 TensorFlow、Keras 或 JAX 就能读取（HDF5 和 msgpack 文件由 `formats` 附加依赖里的 "
                    "h5py 和 msgpack 读取）。读取每种形式的命令都一样，SRC 是它的目录、文件，或快照里存有它的 hub id：",
           "forms": "| 形式 | 目录里有 | 写出者 | 配置来源 |",
           "table": "| transformers / mini_hf_bert | 文件里的名字 | 变换 |",
           "how": {"as is": "不变", "transpose": "转置", "merge heads, transpose": "合并各头后转置",
                   "merge heads": "合并各头", "merge heads, transpose (output side)": "合并各头后转置"},
           "fixture": "测试用的是由它自己的库写出的小 BERT（`tests/fixtures/formats/{fixture}/`，"
                      "`tools/format_fixtures.py`），与那个库自己的输出比较。",
           "keras": "**已声明的差异。** KerasHub 的掩码语言模型头在变换里用 erf GELU、LayerNorm epsilon 1e-5，而它的主干用 "
                    "tanh GELU、1e-12；`BertConfig` 对两者只有一个激活函数和一个 epsilon（与 transformers 相同），所以 "
                    "mini_hf_bert 按主干的设置计算这个头。在测试用的小模型上，掩码语言模型的 logits 与 KerasHub 的最多相差 "
                    "{diff}；编码器的输出在 1e-5 以内一致，用 KerasHub 头的公式计算读入的权重，得到的 logits 也在 1e-5 以内"
                    "（`test_keras_hub_mlm_head_differs_only_in_its_activation_and_epsilon`）。"},
}
#: The fixture each form's section names.
FIXTURE_OF = {"tf_model_h5": "tf_model_h5", "flax_msgpack": "flax_msgpack", "tf2": "tf2_encoder",
              "saved_model": "tf_hub", "keras_hub": "keras_hub"}


def keras_hub_head_difference() -> str:
    """Max |diff| between our BertForMaskedLM's logits and KerasHub's on the committed fixture,
    at the masked positions KerasHub predicted; two significant digits (the last bits vary by machine)."""
    import torch
    from safetensors.torch import load_file

    from mini_hf_bert import BertForMaskedLM

    reference = load_file(os.path.join(FORMATS, "keras_hub.reference.safetensors"))
    model = BertForMaskedLM.from_pretrained(os.path.join(FORMATS, "keras_hub"))
    with torch.no_grad():
        logits = model(**{k: reference[k].long() for k in ("input_ids", "attention_mask", "token_type_ids")}).logits
    positions = reference["masked_positions"].long()
    picked = torch.gather(logits, 1, positions[:, :, None].expand(-1, -1, logits.shape[-1]))
    return f"{(picked - reference['mlm_logits']).abs().max().item():.1e}"


def _forms_section(language: str) -> list[str]:
    from mini_hf_bert.checkpoints.resolve import FORMS

    words = WORDS[language]
    lines = [words["intro"], "", "```", *COMMANDS, "```", "", words["forms"], "| --- | --- | --- | --- |"]
    for title, holds, writer, config in EARLIER_FORMS[language]:
        lines.append(f"| {title} | {holds} | {writer} | {config} |")
    for form in FORMS.values():
        title = form.title if language == "en" else TITLES_ZH[form.name]
        config = form.config if language == "en" else CONFIG_ZH[form.name]
        lines.append(f"| {title} (`{form.name}`) | {form.holds} | {form.written_by} | {config} |")
    return lines + [""]


def _form_sections(language: str) -> list[str]:
    from mini_hf_bert.checkpoints.resolve import FORMS
    from mini_hf_bert.checkpoints.weight_map import FORM_WEIGHT_MAPS

    words = WORDS[language]
    lines = []
    for name, form in FORMS.items():
        if name == "saved_model":  # the TF2 table again: said in its own section
            lines += [f"## {form.title if language == 'en' else TITLES_ZH[name]} (`{name}`)", "",
                      NOTES[language][name], "", words["fixture"].format(fixture=FIXTURE_OF[name]), ""]
            continue
        title = form.title if language == "en" else TITLES_ZH[name]
        lines += [f"## {title} (`{name}`)", "", NOTES[language][name], "",
                  words["fixture"].format(fixture=FIXTURE_OF[name]), "", words["table"], "| --- | --- | --- |"]
        for ours, theirs, transform in FORM_WEIGHT_MAPS[name]:
            lines.append(f"| `{ours}` | `{theirs}` | {words['how'][transform]} |")
        lines.append("")
        if name == "keras_hub":
            lines += [words["keras"].format(diff=keras_hub_head_difference()), ""]
    return lines


def render(language: str = "en") -> str:
    words = WORDS[language]
    lines = [words["title"], "", words["generated"], "", *_forms_section(language)]
    if language == "en":
        lines += _google_tf1_section()
    lines += _form_sections(language)
    return "\n".join(lines)


def _google_tf1_section() -> list[str]:
    from mini_hf_bert.checkpoints.weight_map import (
        DERIVED_BUFFER_SUFFIXES,
        LEGACY_SUFFIX_RENAMES,
        TF_OPTIMIZER_SLOT_SUFFIXES,
        TF_TRAINING_STATE_NAMES,
        TF_WEIGHT_MAP,
    )

    lines = [
        "## Google's TF1 checkpoints",
        "",
        "mini_hf_bert's parameter names *are* transformers' names, so one column serves both.",
        "`{}` stands for a layer number (`layer_{}` in TF, `layer.{}` in PyTorch). Head models",
        "keep the encoder under `bert.`; `BertModel` itself drops that prefix (the loader adds or",
        "strips it). The same rows convert in both directions (`tf_to_hf_name`, `hf_to_tf_name`).",
        "",
        "\"transpose\": TF dense kernels are stored `[in, out]`, torch `nn.Linear.weight` is",
        "`[out, in]`. The classifiers' `output_weights` are already `[out, in]`. A square",
        "768 x 768 kernel loaded without its transpose raises no shape error, so the tests",
        "compare values.",
        "",
        "| transformers / mini_hf_bert | Google TF variable | transpose |",
        "| --- | --- | --- |",
    ]
    for hf_name, tf_name, transpose in TF_WEIGHT_MAP:
        lines.append(f"| `{hf_name}` | `{tf_name}` | {'yes' if transpose else 'no'} |")
    lines += [
        "",
        "`cls.predictions.decoder.weight` has no row: it is the word-embedding matrix itself",
        "(tied), in Google's checkpoints as in transformers'. `cls.predictions.decoder.bias` is",
        "tied to `cls.predictions.bias`.",
        "",
        "## Training state in Google checkpoints: skipped and reported, never loaded",
        "",
        "Variables named " + ", ".join(f"`{n}`" for n in TF_TRAINING_STATE_NAMES) + ", and every variable",
        "ending in " + ", ".join(f"`{s}`" for s in TF_OPTIMIZER_SLOT_SUFFIXES) + ".",
        "Any other variable that no row maps is reported by name and not loaded.",
        "",
        "## Older HuggingFace names",
        "",
        "| in the checkpoint | becomes |",
        "| --- | --- |",
    ]
    for old, new in LEGACY_SUFFIX_RENAMES.items():
        lines.append(f"| `...{old}` | `...{new}` |")
    for suffix in DERIVED_BUFFER_SUFFIXES:
        lines.append(f"| `...{suffix}` | dropped (a buffer derived from the config) |")
    lines.append("")
    return lines


def main() -> None:
    write_text(DOC, render("en"))
    write_text(DOC_ZH, render("zh"))
    sys.stdout.write(f"wrote {DOC} and {DOC_ZH}\n")


if __name__ == "__main__":
    main()

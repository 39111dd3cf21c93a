"""Convert a Google BERT TensorFlow checkpoint, with the arguments of transformers' script
of the same name (which needs TensorFlow; this does not).

    python tools/convert_bert_original_tf_checkpoint_to_pytorch.py \
        --tf_checkpoint_path uncased_L-12_H-768_A-12/bert_model.ckpt \
        --bert_config_file uncased_L-12_H-768_A-12/bert_config.json \
        --pytorch_dump_path out

As in transformers, a ``--pytorch_dump_path`` ending in ``.bin`` receives the
BertForPreTraining state dict (``torch.save``); any other path becomes an HF directory
(config.json, model.safetensors, vocab.txt), as ``python -m mini_hf_bert convert`` writes.
A thin wrapper over ``mini_hf_bert.checkpoints.convert``.
"""

from __future__ import annotations

import argparse
import glob
import logging
import sys

import torch

from mini_hf_bert import BertConfig, BertForPreTraining
from mini_hf_bert.__main__ import EXIT_USER_ERROR, error_message
from mini_hf_bert.checkpoints.convert import check_destination, convert
from mini_hf_bert.file_utils import staged_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tf_checkpoint_path", required=True, help="the checkpoint prefix (.../bert_model.ckpt), its directory, or the .zip")
    parser.add_argument("--bert_config_file", required=True, help="bert_config.json of the pre-trained model")
    parser.add_argument("--pytorch_dump_path", required=True, help="output: a .bin file (state dict) or a directory")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        if args.pytorch_dump_path.endswith(".bin"):
            sources = [args.tf_checkpoint_path, args.bert_config_file, *glob.glob(glob.escape(args.tf_checkpoint_path) + ".*")]
            check_destination(args.pytorch_dump_path, sources)
            config = BertConfig.from_json_file(args.bert_config_file)
            model = BertForPreTraining.from_pretrained(args.tf_checkpoint_path, config=config)
            with staged_file(args.pytorch_dump_path) as staged:  # written whole, then renamed: never a truncated .bin
                torch.save(model.state_dict(), staged)
            print(f"wrote {args.pytorch_dump_path}")
        else:
            report = convert(args.tf_checkpoint_path, args.pytorch_dump_path, config_file=args.bert_config_file)
            print(f"wrote {report.destination}: {report.architecture}, files: {', '.join(report.files)}")
    except Exception as e:  # noqa: BLE001 - one line, never a traceback (as python -m mini_hf_bert)
        print(f"error: {error_message(e)}", file=sys.stderr)
        return EXIT_USER_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())

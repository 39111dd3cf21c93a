"""A training loop written as accelerate's docs write one, on a mini_hf_bert model; run by
tests/integrations/test_accelerate.py, in one process and under torchrun.

    python accelerate_train.py OUT [--mixed-precision bf16] [--library transformers]
    torchrun --nproc_per_node 2 accelerate_train.py OUT

Every process trains on its shard of the same fixed batches (accelerate splits each batch
of BATCH rows across processes, and DDP averages the gradients), so with dropout off the
result is the same whatever the process count. The main process saves the model with
``save_pretrained`` and writes the losses to OUT/losses.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
from accelerate import Accelerator, DataLoaderConfiguration

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

import mini_hf_bert  # noqa: E402

CONFIG = dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=37,
              max_position_embeddings=16, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
STEPS, BATCH, LENGTH = 5, 8, 10


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--mixed-precision", default="no")
    parser.add_argument("--library", choices=("mini_hf_bert", "transformers"), default="mini_hf_bert")
    args = parser.parse_args()
    # split_batches: each batch of BATCH rows is shared out among the processes, so the
    # steps are the same batches whatever the process count.
    accelerator = Accelerator(mixed_precision=args.mixed_precision, cpu=True,
                              dataloader_config=DataLoaderConfiguration(split_batches=True))
    torch.manual_seed(0)
    model = mini_hf_bert.BertForMaskedLM(mini_hf_bert.BertConfig(**CONFIG))
    if args.library == "transformers":  # the same weights in transformers' class
        import transformers

        theirs = transformers.BertForMaskedLM(transformers.BertConfig(**CONFIG))
        theirs.load_state_dict(model.state_dict())
        model = theirs
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(5, CONFIG["vocab_size"], (STEPS * BATCH, LENGTH), generator=generator)
    rows = [{"input_ids": row, "labels": row} for row in ids]
    loader = torch.utils.data.DataLoader(rows, batch_size=BATCH, shuffle=False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    model.train()
    losses = []
    for batch in loader:
        loss = model(**batch).loss
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        losses.append(accelerator.gather(loss.detach()[None]).float().mean().item())
    accelerator.wait_for_everyone()
    unwrapped = accelerator.unwrap_model(model)
    unwrapped.save_pretrained(args.out, is_main_process=accelerator.is_main_process,
                              state_dict=accelerator.get_state_dict(model))
    if accelerator.is_main_process:
        with open(os.path.join(args.out, "losses.json"), "w") as f:
            json.dump({"losses": losses, "processes": accelerator.num_processes}, f)
    accelerator.end_training()


if __name__ == "__main__":
    main()

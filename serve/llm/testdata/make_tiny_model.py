"""Make a tiny Llama model that vLLM's CPU engine can serve, for tests.

Run with the LLM virtualenv's python (scripts/setup-venv-llm.sh):

    python make_tiny_model.py OUT

writes into the directory OUT a Hugging Face model directory
(config.json, model.safetensors, tokenizer.json, tokenizer_config.json,
chat template): a LlamaForCausalLM with random weights (seeded, so the same
every run), 2 layers, hidden size 128 and 2 heads, so head_dim 64 (vLLM's
CPU attention supports 32, 64, 80, ... but not 16), about 0.4 M parameters
in float32; and a byte-level BPE tokenizer trained here on a few sentences,
with special tokens and a chat template. Nothing is downloaded.

The special tokens' output rows are zero, so their logits are 0 while the
other tokens' are random: a greedy decode (temperature 0) never picks one,
so it never ends early (every request generates exactly max_tokens tokens)
and never yields a token the detokenizer drops (the text is never empty).

Prints one JSON line: {"out", "vocab_size", "params", "eos_token_id"}.
"""

import json
import os
import sys

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

SENTENCES = [
    "Hello, how are you today?",
    "I am a tiny language model made for tests.",
    "Ray Serve runs replicas on TPU slices.",
    "The quick brown fox jumps over the lazy dog.",
    "What is the capital of France? Paris is the capital of France.",
    "user assistant system: one two three four five six seven eight nine ten.",
]
SPECIALS = ["<unk>", "<s>", "</s>", "<pad>", "<|user|>", "<|assistant|>", "<|system|>", "<|end|>"]
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
MAX_LEN = 512


def tokenizer() -> PreTrainedTokenizerFast:
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(SENTENCES * 20, trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        chat_template=CHAT_TEMPLATE,
    )
    fast.model_max_length = MAX_LEN
    return fast


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_tiny_model.py OUT")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    tok = tokenizer()
    tok.save_pretrained(out)
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=tok.backend_tokenizer.get_vocab_size(),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=MAX_LEN,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
        torch_dtype="float32",
    )
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():
        for t in SPECIALS:
            model.lm_head.weight[tok.convert_tokens_to_ids(t)].zero_()
    model.save_pretrained(out, safe_serialization=True)
    print(json.dumps({
        "out": out,
        "vocab_size": cfg.vocab_size,
        "params": sum(p.numel() for p in model.parameters()),
        "eos_token_id": tok.eos_token_id,
    }))


if __name__ == "__main__":
    main()

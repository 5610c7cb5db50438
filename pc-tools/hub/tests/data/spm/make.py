# Trains a tiny SentencePiece model (llama-style: BPE, byte fallback,
# identity normalisation) and records what the sentencepiece library says
# about it (pieces, scores, types, encodings) as golden data for the import
# tests. Run with the `sentencepiece` package: python3 make.py
import json, os, sentencepiece as spm
here = os.path.dirname(os.path.abspath(__file__))
text = """Once upon a time there was a little girl named Lily. She loved to play outside in the sun.
One day she saw a big red ball in the park. She ran to the ball and kicked it high.
The ball flew over the tree and landed near a happy dog. The dog wagged its tail.
Lily laughed and said hello to the dog. They played together until the sun went down.
Tom had a small boat. He liked to sail it on the lake with his friend Sam.
"""
open(os.path.join(here, 'train.txt'),'w').write(text * 3)
spm.SentencePieceTrainer.train(input=os.path.join(here, 'train.txt'), model_prefix=os.path.join(here, 'tokenizer'), vocab_size=400,
    model_type='bpe', byte_fallback=True, character_coverage=1.0, split_digits=True,
    unk_id=0, bos_id=1, eos_id=2, pad_id=-1, user_defined_symbols=['<tool>'], normalization_rule_name='identity', minloglevel=2)
sp = spm.SentencePieceProcessor(model_file=os.path.join(here, 'tokenizer.model'))
def ty(i):
    if sp.is_unknown(i): return 2
    if sp.is_control(i): return 3
    if sp.is_unused(i): return 5
    if sp.is_byte(i): return 6
    return 1
pieces = [[sp.id_to_piece(i), sp.get_score(i), ty(i)] for i in range(sp.get_piece_size())]
samples = ["Once upon a time", "Lily loved the big red ball.", "The dog wagged 42 tails!"]
enc = [[s, sp.encode(s)] for s in samples]
json.dump({"pieces": pieces, "encode": enc, "sentencepiece": spm.__version__}, open(os.path.join(here, 'expected.json'),'w'), ensure_ascii=False, indent=0)
os.remove(os.path.join(here, 'train.txt'))
os.remove(os.path.join(here, 'tokenizer.vocab'))

# The same tokenizer as Hugging Face's converter writes it (tokenizer.json:
# BPE with byte fallback, merges), for checkpoints without tokenizer.model.
# Needs `transformers` (no PyTorch). Its encodings must equal the above.
from transformers import AutoTokenizer
src = os.path.join(here, 'hf-src')
os.makedirs(src, exist_ok=True)
import shutil
shutil.copy(os.path.join(here, 'tokenizer.model'), src)
json.dump({"tokenizer_class": "LlamaTokenizer", "bos_token": "<s>", "eos_token": "</s>",
           "unk_token": "<unk>", "add_bos_token": True, "legacy": True},
          open(os.path.join(src, 'tokenizer_config.json'), 'w'))
hf = AutoTokenizer.from_pretrained(src)
shutil.rmtree(src)
out = os.path.join(here, 'hf')
hf.save_pretrained(out)
for s, ids in enc:
    assert hf.encode(s, add_special_tokens=False) == ids, s
for f in os.listdir(out):
    if f not in ('tokenizer.json', 'tokenizer_config.json'):
        os.remove(os.path.join(out, f))

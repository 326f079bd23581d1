"""The counting rule: which tensors of a file are the model's parameters.

The rules count "the total model size": the parameters of the model (what
`sum(p.numel() for p in model.parameters())` gives). A file also holds what is not a parameter,
reported apart and not counted:
- buffers: BatchNorm's running statistics and `num_batches_tracked` (Keras: moving_mean,
  moving_variance), and every tensor that is not floating point (autograd cannot train an
  integer tensor, so it is never a parameter: index tables, counters, masks);
- optimizer state: everything under a dict that has both `state` and `param_groups` (what
  `optimizer.state_dict()` returns: Adam's moments, steps), or under a key of a training
  checkpoint whose name starts with `optim` (`optimizer`, `optimizer_states`, ...), or a
  learning-rate scheduler or AMP scaler key;
- EMA copies: everything under a key one of whose words is `ema` (`model_ema`, `ema`,
  `state_dict_ema`, `ema_model`...), `shadow`, `swa` or `averaged`, and a tensor whose name
  starts with such a word (`ema.layer1.weight`, mmcv's `ema_backbone_conv1_weight`).
Everything else that is floating point is a parameter: when in doubt, counted (a second model in
the file, a teacher of a semi-supervised method, a discriminator are counted). One tensor under
several names (tied weights) is counted once, distinct views of one storage each (set_apart.py
checks that what is set apart looks like what it claims to be). Identical files are counted once;
the total is the sum over the files, compared with the limit.
"""
import re
from typing import Dict, List, Optional, Sequence, Tuple

from .result import BUFFERS, CATEGORIES, EMA, OPTIMIZER, PARAMETERS, Record

RULE = (
    "Counting rule: the parameters of the model are counted, as "
    "sum(p.numel() for p in model.parameters()) would count them; buffers (BatchNorm running "
    "statistics, num_batches_tracked, any tensor that is not floating point), optimizer state "
    "(Adam moments, steps, schedulers) and EMA copies in a training checkpoint are reported apart "
    "and not counted (a file holding only an EMA copy holds the model: counted), if each looks "
    "like what it claims to be (else it is counted). One tensor under several names (tied "
    "weights) and identical files are counted once; distinct views of one storage each, as "
    "once loaded. Any other floating-point tensor counts: when in doubt, counted.")

BUFFER_NAMES = frozenset(("running_mean", "running_var", "num_batches_tracked", "moving_mean",
                          "moving_variance"))
FLOATING = frozenset(("float16", "bfloat16", "float32", "float64", "complex64", "complex128",
                      "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
                      "float8", "complex32"))
_WORDS = re.compile(r"[^0-9a-z]+")
_EMA_WORDS = frozenset(("ema", "shadow", "swa", "averaged"))
_TRAINING_STATE = frozenset(("opt", "opt_state", "lr_scheduler", "lr_schedulers", "scheduler",
                             "schedulers", "scaler", "grad_scaler", "amp", "amp_scaler"))


def _words(key: str) -> Sequence[str]:
    return [w for w in _WORDS.split(key.lower()) if w]


def container_category(key: str) -> Optional[str]:
    """What a key says of everything under it: OPTIMIZER (`optimizer`, `lr_scheduler`...), EMA
    (`model_ema`, `ema`...) or None."""
    low = key.lower()
    if low.startswith("optim") or low in _TRAINING_STATE:
        return OPTIMIZER
    if _EMA_WORDS.intersection(_words(key)):
        return EMA
    return None


def category(path: Sequence, dtype: str, optimizer_ancestor: bool, ema: bool = True) -> str:
    """The category of a tensor reached through path (keys and list indices); optimizer_ancestor:
    a dict on the way holds both `state` and `param_groups`; ema=False: an EMA copy is not told
    apart (its tensors are categorised as the model's would be)."""
    keys = [k for k in path if isinstance(k, str)]
    if optimizer_ancestor:
        return OPTIMIZER
    for key in keys[:-1] if keys else ():
        found = container_category(key)
        if found == OPTIMIZER or (found == EMA and ema):
            return found
    return by_name(keys[-1] if keys else "", dtype, ema)


def by_name(name: str, dtype: str, ema: bool = True) -> str:
    """The category a tensor's own name and dtype give it (no container says otherwise): a
    state-dict key such as "layer1.0.bn1.running_mean", or a safetensors/npz/Keras name
    ("bn/moving_mean:0")."""
    parts = [p for p in re.split(r"[./:]", name.lower()) if p]
    if dtype not in FLOATING or BUFFER_NAMES.intersection(parts):
        return BUFFERS
    if ema and "." in name and _EMA_WORDS.intersection(_words(name.split(".")[0])):
        return EMA      # a flat file: "ema.layer1.weight", "model_ema.head.bias"
    words = _words(name)
    if ema and len(words) > 1 and words[0] in _EMA_WORDS:
        return EMA      # mmcv's EMAHook keeps its copies as "ema_backbone_conv1_weight"
    return PARAMETERS


# A file whose only weights are an EMA copy (a model released as its average, timm's
# state_dict_ema alone, one state dict pickled under "ema" and, by reference, "model"): that copy
# is the model, and not counting it would count nothing.
EMA_ONLY = "it holds an EMA copy and no other parameters: the EMA copy is the model, counted"


class Figures:
    """Elements per category, and the same tensors categorised without telling EMA copies apart
    (what counts when the file holds nothing but an EMA copy); a Record of each tensor."""

    def __init__(self) -> None:
        self.told: Dict[str, int] = {c: 0 for c in CATEGORIES}
        self.as_model: Dict[str, int] = {c: 0 for c in CATEGORIES}
        self.records: List[Record] = []

    def add(self, path: Sequence, dtype: str, optimizer: bool, n: int,
            shape: Sequence[int] = ()) -> None:
        told = category(path, dtype, optimizer)
        self.told[told] += n
        self.as_model[category(path, dtype, optimizer, ema=False)] += n
        names = [k for k in path if isinstance(k, str)]
        self.records.append(Record(told, names[-1] if names else "", tuple(shape), n,
                                   dtype in FLOATING))

    def result(self) -> Tuple[Dict[str, int], str]:
        return ema_only(self.told, self.as_model)


def ema_only(told: Dict[str, int], as_model: Dict[str, int]) -> Tuple[Dict[str, int], str]:
    """(the file's figures, a note): as_model when EMA copies are its only parameters."""
    if told[PARAMETERS] == 0 and told[EMA] > 0 and as_model[PARAMETERS] > 0:
        return dict(as_model), EMA_ONLY
    return dict(told), ""

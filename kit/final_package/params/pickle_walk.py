"""Read a pickle without unpickling it: its opcodes (pickle_ops.py) drive a small stack machine
that builds inert values only.

Unpickling runs code: GLOBAL imports any callable, REDUCE calls it (os.system through
`__reduce__`). Here no global is ever imported and nothing is ever called: a global off the
allow-list (pickle_globals.py) stands as a Foreign name, and the pickle is refused as unsafe,
naming it, as soon as it would call, build or return anything after importing it. Each accepted
"call" is done by our own function that builds a record (a tensor's storage, offset, size and
stride).

Where this machine is stricter than Python's unpickler (a malformed tensor, a dict key no
checkpoint holds), the rest of the pickle is still scanned for imports up to its STOP, so that
nothing Python would import hides behind a refusal; where Python's unpickler stops (an unknown
opcode, data that ends inside an argument, an empty stack), so does this walk: NotAPickle, with
the names imported before, if any.

Bounds (bounds.py): opcodes per pickle and per package (the Budget), values kept (stack, memo,
containers), strings kept; time is linear in the opcodes read.
"""
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from scoring.problems import shown
from scoring.quoting import brief
from . import bounds, pickle_globals as pg
from .pickle_globals import (Array, Foreign, Global, Inert, Storage, Tensor, STORAGE_DTYPES,
                             TORCH_DTYPES, VALUES)
from .pickle_ops import OPCODES, Blob, Ended, OpReader
from .result import FileRefused

# Re-exported for the counters (torch_zip.py, and tests).
__all__ = ["walk", "Walked", "NotAPickle", "Tensor", "Array", "Storage", "STORAGE_DTYPES",
           "TORCH_DTYPES"]

# How persistent ids are read: torch.save's zip format ('storage', type, key, location,
# numel), the legacy format (the same and a view: 6 items), or none (a plain pickle.load has no
# persistent_load: Python's unpickler stops there).
ZIP, LEGACY, NO_PERSISTENT = "zip", "legacy", "none"


class Walked(NamedTuple):
    root: Any
    storages: Dict[str, Storage]
    end: int          # the offset after STOP (legacy files hold several pickles in a row)
    opcodes: int


class Damaged(FileRefused):
    """This walk cannot read the pickle on, where Python's unpickler might (a malformed tensor,
    a dict key no checkpoint holds): str() says why. The rest was read for imports (none off
    the allow-list); at_stop: up to its STOP."""

    def __init__(self, reason: str, at_stop: bool) -> None:
        super().__init__(reason)
        self.at_stop = at_stop


class NotAPickle(Exception):
    """Python's unpickler stops here as well: str() says why. imports: the globals off the
    allow-list it imported before stopping (an import runs the module's code if it exists);
    opcodes: how many were read."""

    def __init__(self, reason: str, imports: Tuple[str, ...] = (), opcodes: int = 0) -> None:
        super().__init__(reason)
        self.imports, self.opcodes = imports, opcodes


class _Mark:
    pass


MARK = _Mark()
_STOP = ord(".")
# A dict weighs as much as this many other values against MAX_PICKLE_VALUES (an empty dict takes
# 240 bytes on Python 3.7, 64 on 3.11; a list 56 to 64, a small tuple or string about 50).
DICT_VALUES = 4


class _Machine:
    """The stack machine. Each opcode has its own step below (_steps maps them); a step reads
    only its argument and the stack."""

    def __init__(self, reader: OpReader, what: str, persistent: str, limit: int) -> None:
        self.r, self.what, self.persistent, self.limit = reader, what, persistent, limit
        self.stack: List[Any] = []
        self.marks: List[int] = []
        self.memo: Dict[int, Any] = {}
        self.storages: Dict[str, Storage] = {}
        self.values = 0               # stack pushes and memo entries so far
        self.opcodes = 0
        self.foreign: Optional[Foreign] = None   # the first global off the allow-list
        self.steps = self._steps()

    # -- the loop
    def run(self) -> Walked:
        r, steps = self.r, self.steps
        try:
            while True:
                code, arg = r.next()
                self.opcodes += 1
                if self.opcodes > self.limit:
                    raise _OverBudget()
                if code == _STOP:
                    return self._stop()
                steps[code](arg)
                if self.values > bounds.MAX_PICKLE_VALUES:
                    raise FileRefused("not readable: {} builds more than {:,} values (no "
                                      "checkpoint needs so many; refused: nothing was "
                                      "run)".format(self.what, bounds.MAX_PICKLE_VALUES))
        except Ended as exc:
            raise NotAPickle(str(exc), (str(self.foreign),) if self.foreign else (),
                             self.opcodes) from None
        except FileRefused as exc:
            if str(exc).startswith("unsafe"):
                raise
            raise self._scan_rest(exc) from None

    def _scan_rest(self, strict: FileRefused) -> FileRefused:
        """After a refusal of this machine's own (Python's unpickler might go on): the rest of
        the pickle, up to STOP, read for the globals Python would import. An import off the
        allow-list makes the pickle unsafe; else the refusal stands."""
        if self.foreign is not None:
            return pg.refusal(self.foreign)
        r = self.r
        at_stop = False
        try:
            while self.opcodes <= self.limit:
                code, arg = r.next()
                self.opcodes += 1
                name = OPCODES[code][0]
                if name == "STOP":
                    at_stop = True
                    break
                if name in ("GLOBAL", "INST") and all(isinstance(a, bytes) for a in arg):
                    module, attr = (a.decode("utf-8", "replace") for a in arg)
                    if pg.accepted(module, attr) is None and pg.plausible(module, attr):
                        return pg.refusal(Foreign(module, attr))
                elif name == "STACK_GLOBAL":
                    return FileRefused("not readable: after {} ({}), the pickle imports a "
                                       "global whose name this walk can no longer follow "
                                       "(refused: nothing was run)".format(
                                           shown(str(strict)), self.what))
                elif name in ("EXT1", "EXT2", "EXT4", "NEXT_BUFFER"):
                    break      # Python's unpickler stops there (an unregistered extension)
        except Ended:
            pass
        if self.opcodes > self.limit:
            raise _OverBudget()
        if str(strict).startswith("not readable"):
            return strict
        return Damaged(str(strict), at_stop)

    def _stop(self) -> Walked:
        if self.foreign is not None:     # the loaded value holds what it imported
            raise pg.refusal(self.foreign)
        return Walked(self._pop(), self.storages, self.r.pos, self.opcodes)

    # -- the stack
    def _push(self, value: Any) -> None:
        self.stack.append(value)
        self.values += 1

    def _pop(self) -> Any:
        if not self.stack:
            raise Ended("the stack runs empty")
        return self.stack.pop()

    def _pop_mark(self) -> List[Any]:
        if not self.marks:
            raise Ended("no MARK")
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items

    def _top(self) -> Any:
        if not self.stack:
            raise Ended("the stack runs empty")
        return self.stack[-1]

    def _calling(self) -> None:
        """Before any call, build or persistent load: nothing after an import off the
        allow-list."""
        if self.foreign is not None:
            raise pg.refusal(self.foreign)

    # -- the steps, one per opcode
    def _steps(self) -> Dict[int, Callable[[Any], None]]:
        by_name: Dict[str, Callable[[Any], None]] = {
            "PROTO": _nothing, "FRAME": self._frame, "MARK": self._mark, "POP": self._pop_step,
            "POP_MARK": self._pop_mark_step, "DUP": lambda arg: self._push(self._top()),
            "NONE": lambda arg: self._push(None), "NEWTRUE": lambda arg: self._push(True),
            "NEWFALSE": lambda arg: self._push(False),
            "EMPTY_DICT": self._empty_dict, "EMPTY_LIST": lambda arg: self._push([]),
            "EMPTY_TUPLE": lambda arg: self._push(()), "EMPTY_SET": lambda arg: self._push([]),
            "TUPLE": lambda arg: self._push(tuple(self._pop_mark())),
            "TUPLE1": lambda arg: self._tuple(1), "TUPLE2": lambda arg: self._tuple(2),
            "TUPLE3": lambda arg: self._tuple(3), "LIST": lambda arg: self._push(self._pop_mark()),
            "FROZENSET": lambda arg: self._push(self._pop_mark()), "DICT": self._dict_step,
            "APPEND": lambda arg: self._extend([self._pop()]),
            "APPENDS": lambda arg: self._extend(self._pop_mark()),
            "ADDITEMS": lambda arg: self._extend(self._pop_mark()),
            "SETITEM": self._setitem, "SETITEMS": lambda arg: self._setitems(self._pop_mark()),
            "PUT": self._put, "BINPUT": self._put, "LONG_BINPUT": self._put,
            "MEMOIZE": lambda arg: self._put(len(self.memo)),
            "GET": self._get, "BINGET": self._get, "LONG_BINGET": self._get,
            "GLOBAL": self._global_step, "STACK_GLOBAL": self._stack_global,
            "INST": self._inst, "OBJ": self._obj, "REDUCE": self._reduce_step,
            "NEWOBJ": lambda arg: self._newobj(False), "NEWOBJ_EX": lambda arg: self._newobj(True),
            "BUILD": self._build_step, "BINPERSID": self._binpersid, "PERSID": self._persid,
            "EXT1": self._ext, "EXT2": self._ext, "EXT4": self._ext,
            "NEXT_BUFFER": self._next_buffer, "READONLY_BUFFER": self._readonly_buffer,
        }
        for name in ("BININT", "BININT1", "BININT2", "LONG1", "LONG4", "LONG", "INT",
                     "BINFLOAT", "FLOAT", "BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8",
                     "UNICODE", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8",
                     "BINSTRING", "SHORT_BINSTRING", "STRING"):
            by_name[name] = self._push
        steps = {code: by_name[name] for code, (name, _) in OPCODES.items() if name != "STOP"}
        assert len(steps) == len(OPCODES) - 1
        return steps

    def _frame(self, n: int) -> None:
        if self.r.pos + n > self.r.end:     # Python reads the whole frame ahead
            raise Ended("a FRAME longer than the data")

    def _mark(self, arg: Any) -> None:
        self.marks.append(len(self.stack))
        self.values += 1

    def _pop_mark_step(self, arg: Any) -> None:
        self._pop_mark()

    def _pop_step(self, arg: Any) -> None:
        if self.stack:
            self.stack.pop()
        else:                # POP with an empty stack pops a mark (Python's unpickler does)
            self._pop_mark()

    def _tuple(self, n: int) -> None:
        if len(self.stack) < n:
            raise Ended("the stack runs empty")
        top = tuple(self.stack[len(self.stack) - n:])
        del self.stack[len(self.stack) - n:]
        self._push(top)

    def _empty_dict(self, arg: Any) -> None:
        self._push({})
        self.values += DICT_VALUES - 1

    def _dict_step(self, arg: Any) -> None:
        items = self._pop_mark()
        self._push(pg.as_dict(list(zip(items[::2], items[1::2]))))
        self.values += DICT_VALUES - 1

    def _extend(self, items: List[Any]) -> None:
        target = self._top()
        if isinstance(target, Foreign):
            raise pg.refusal(target)          # Python would call its append or extend
        if isinstance(target, _INERT_TYPES):
            raise Ended("APPEND to a {}, which has no append".format(type(target).__name__))
        if not isinstance(target, list):
            raise FileRefused("{} appends to {}, not a list".format(self.what,
                                                                    type(target).__name__))
        target.extend(items)

    def _setitem(self, arg: Any) -> None:
        value = self._pop()
        self._setitems([self._pop(), value])

    def _setitems(self, items: List[Any]) -> None:
        target = self._top()
        if isinstance(target, Foreign):
            raise pg.refusal(target)          # Python would call its __setitem__
        if isinstance(target, _INERT_TYPES) and not isinstance(target, dict):
            raise Ended("SETITEM on a {}, which has no items to set".format(
                type(target).__name__))
        if not isinstance(target, dict):
            raise FileRefused("{} sets an item of {}, not a dict".format(
                self.what, type(target).__name__))
        target.update(pg.as_dict(list(zip(items[::2], items[1::2]))))

    def _put(self, index: Any) -> None:
        self.memo[index] = self._top()
        self.values += 1

    def _get(self, index: Any) -> None:
        if index not in self.memo:
            raise Ended("memo {} read before it is set".format(index))
        self._push(self.memo[index])

    def _import(self, module: Any, name: Any) -> Any:
        """The value standing for a global: accepted, or Foreign (nothing imported here)."""
        if not isinstance(module, str) or not isinstance(name, str):
            raise Ended("a global whose module or name is not a string")
        value = pg.accepted(module, name)
        if value is not None:
            return value
        if not pg.plausible(module, name):
            raise Ended("a global named {}, which no Python module has".format(
                brief(module + "." + name)))
        foreign = Foreign(module, name)
        if self.foreign is None:
            self.foreign = foreign
        return foreign

    def _global_step(self, arg: Tuple[Any, Any]) -> None:
        module, name = (a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else a
                        for a in arg)
        self._push(self._import(module, name))

    def _stack_global(self, arg: Any) -> None:
        name, module = self._pop(), self._pop()
        self._push(self._import(module, name))

    def _inst(self, arg: Tuple[Any, Any]) -> None:
        module, name = (a.decode("utf-8", "surrogateescape") if isinstance(a, bytes) else a
                        for a in arg)
        cls = self._import(module, name)
        self._instantiate(cls, tuple(self._pop_mark()))

    def _obj(self, arg: Any) -> None:
        args = self._pop_mark()
        if not args:
            raise Ended("OBJ without a class")
        self._instantiate(args[0], tuple(args[1:]))

    def _instantiate(self, cls: Any, args: tuple) -> None:
        self._calling()
        self._push(_call(cls, args, self.what))

    def _reduce_step(self, arg: Any) -> None:
        args, func = self._pop(), self._pop()
        self._calling()
        self._push(_call(func, args, self.what))

    def _newobj(self, with_kwargs: bool) -> None:
        if with_kwargs:
            self._pop()
        self._pop()                    # the arguments: a Namespace is built empty
        cls = self._pop()
        self._calling()
        if isinstance(cls, Foreign):
            raise pg.refusal(cls)
        if cls != Global("argparse", "Namespace"):
            raise FileRefused("unsafe: the pickle creates an object of {} (refused: nothing "
                              "was run)".format(shown(str(cls))))
        self._push(Inert("argparse.Namespace", {}))

    def _build_step(self, arg: Any) -> None:
        state = self._pop()
        target = self._top()
        self._calling()
        _build(target, state, self.what)

    def _binpersid(self, arg: Any) -> None:
        pid = self._pop()
        self._calling()
        if self.persistent == NO_PERSISTENT:
            raise Ended("a persistent id, which a plain pickle.load cannot resolve")
        self._push(_storage(pid, self.storages, self.what, self.persistent))

    def _persid(self, arg: Any) -> None:
        # torch's persistent_load asserts a tuple; a plain pickle.load has none
        raise Ended("a text persistent id, which no loader resolves")

    def _ext(self, arg: Any) -> None:
        # copyreg's extension registry is empty unless a program fills it (torch and numpy do
        # not): Python's unpickler stops at an unregistered code
        raise Ended("an extension code (EXT), which no loader registers")

    def _next_buffer(self, arg: Any) -> None:
        raise Ended("out-of-band data (NEXT_BUFFER), which torch.load does not give")

    def _readonly_buffer(self, arg: Any) -> None:
        if not isinstance(self._top(), (bytes, bytearray, Blob)):
            raise Ended("READONLY_BUFFER of something that is no buffer")


class _OverBudget(Exception):
    pass


# Values Python's unpickler can neither append to, set an item of, call nor build: an opcode
# doing so stops it (AttributeError, TypeError), as it stops this walk.
_INERT_TYPES = (type(None), bool, int, float, str, bytes, tuple, dict, Blob, Global)


def _nothing(arg: Any) -> None:
    pass


def _call(func: Any, args: Any, what: str) -> Any:
    if isinstance(func, Foreign):
        raise pg.refusal(func)
    if not isinstance(func, Global):     # no other value a pickle builds here is callable
        raise Ended("a call of a {}, which is not callable".format(type(func).__name__))
    if not isinstance(args, tuple):
        raise Ended("a call whose arguments are not a tuple")
    call = pg.CALLS.get((func.module, func.name))
    if call is None:
        raise FileRefused("unsafe: the pickle calls {} (refused: nothing was run)".format(
            shown(str(func))))
    return call(args)


def _build(target: Any, state: Any, what: str) -> None:
    if isinstance(target, Foreign):
        raise pg.refusal(target)
    if isinstance(target, Array):
        # ndarray.__setstate__((version, shape, dtype, is_fortran, data))
        if isinstance(state, tuple) and len(state) == 5 and isinstance(state[2], Inert):
            target.shape = pg.ints(tuple(state[1]) if isinstance(state[1], (tuple, list))
                                   else state[1], "shape")
            target.dtype = str(state[2].detail)
            pg.check_array_data(target, state[4])
            return
        raise FileRefused("{}: a numpy array with a malformed state".format(what))
    if isinstance(target, Inert):
        return           # a Namespace's attributes, a dtype's flags: kept inert
    if isinstance(target, (dict, Tensor)):
        return           # a state dict's _metadata; a parameter's state
    if isinstance(target, _INERT_TYPES + (list,)):
        raise Ended("BUILD of a {}, which has no state to set".format(type(target).__name__))
    raise FileRefused("{} sets the state of {}, which no checkpoint does".format(
        what, type(target).__name__))


def _storage(pid: Any, storages: Dict[str, Storage], what: str, persistent: str) -> Storage:
    size = 6 if persistent == LEGACY else 5
    if not (isinstance(pid, tuple) and len(pid) == size and pid[0] == "storage"):
        raise FileRefused("{} has a persistent id that is not a torch storage ({})".format(
            what, brief(pid)))
    kind, key, location, numel = pid[1:5]
    if isinstance(kind, Foreign):
        raise pg.refusal(kind)
    if not (isinstance(kind, Global) and (kind.module, kind.name) in VALUES and
            kind.name in STORAGE_DTYPES):
        raise FileRefused("{}: a storage of unknown type {}".format(what, brief(str(kind))))
    if not isinstance(key, str) or type(numel) is not int or not 0 <= numel <= bounds.MAX_DIM:
        raise FileRefused("{}: a malformed storage record ({})".format(what, brief(pid)))
    if size == 6 and pid[5] is not None:
        raise FileRefused("not readable: {} holds a legacy storage view, which this counter "
                          "does not read (refused: nothing was run)".format(what))
    storage = Storage(kind.name, key, shown(str(location))[:40], numel)
    seen = storages.get(key)
    if seen is not None and seen != storage:
        raise FileRefused("{}: storage {} is declared twice, differently".format(what, shown(key)))
    storages[key] = storage
    return storage


def walk(data: Any, what: str = "the pickle", budget: Optional[bounds.Budget] = None,
         start: int = 0, persistent: str = ZIP) -> Walked:
    """The inert value of the pickle at data[start:] (bytes or an mmap); FileRefused naming the
    first thing refused; NotAPickle where Python's unpickler stops too."""
    budget = bounds.default_budget(budget)
    own = bounds.MAX_OPCODES_PER_PICKLE
    machine = _Machine(OpReader(data, start), what, persistent, budget.limit("opcodes", own))
    try:
        return machine.run()
    except _OverBudget:
        if budget.binding("opcodes", own):
            raise budget.exhausted("opcodes", what) from None
        raise FileRefused("not readable: {} holds more than {:,} pickle opcodes (a state dict "
                          "of 200,000 tensors holds fewer; refused: nothing was run)".format(
                              what, own)) from None
    finally:
        budget.take("opcodes", machine.opcodes)

"""Prints the Python standard library's documented functions, classes and methods
as JSON lines, sorted by name: the code set of Cairn's retrieval benchmark
(benches/retrieval.rs, tests/it/retrieval.rs). Run with the system's CPython 3.11
(Debian's libpython3.11-stdlib); the docstrings are read here, never stored in the
repository. The module list is fixed so that every run reads the same set."""

import importlib
import inspect
import json
import sys

MODULES = """
argparse base64 bisect calendar collections configparser contextlib copy csv
datetime difflib email.utils fnmatch fractions ftplib functools getpass gettext glob
gzip hashlib heapq hmac html http.client http.cookies imaplib inspect ipaddress
itertools json logging logging.handlers mailbox math mimetypes operator os os.path
pathlib pickle platform pprint queue random re secrets shelve shlex shutil signal
smtplib socket sqlite3 statistics string struct subprocess tarfile tempfile textwrap
threading time timeit traceback urllib.parse urllib.request uuid warnings weakref
zipfile zlib
""".split()


def doc_of(obj):
    d = obj.__doc__
    if not isinstance(d, str):
        return None
    d = inspect.cleandoc(d)
    return d if len(d) >= 40 else None


def home(obj):
    return getattr(obj, "__module__", None) or ""


def main():
    seen = {}
    for name in MODULES:
        mod = importlib.import_module(name)
        # os.path is posixpath: its functions say so in __module__.
        owners = {mod.__name__, name, "posix" if name == "os" else name}
        for attr, obj in sorted(vars(mod).items()):
            if attr.startswith("_"):
                continue
            if not (inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.isclass(obj)):
                continue
            if home(obj) not in owners and not (home(obj) == "_" + name
                                                 or home(obj).startswith("_" + name)):
                continue
            kind = "class" if inspect.isclass(obj) else "function"
            d = doc_of(obj)
            if d:
                seen.setdefault(f"{name}.{attr}", (name, kind, d))
            if kind != "class":
                continue
            for m, f in sorted(vars(obj).items()):
                if m.startswith("_"):
                    continue
                f = getattr(f, "__func__", f)
                if not (inspect.isfunction(f) or inspect.ismethoddescriptor(f) or inspect.isbuiltin(f)):
                    continue
                d = doc_of(f)
                if d:
                    seen.setdefault(f"{name}.{attr}.{m}", (name, "method", d))
    for q in sorted(seen):
        module, kind, doc = seen[q]
        print(json.dumps({"name": q, "module": module, "kind": kind, "doc": doc}))
    print(json.dumps({"python": sys.version.split()[0]}), file=sys.stderr)


main()

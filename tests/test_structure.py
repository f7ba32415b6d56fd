"""The rules the code states about itself, pinned: who speaks SQL, who prints, who writes files,
which modules a module may import (its floor), no import cycle, a flat package."""
import ast
import unittest

from tests.helpers import ROOT

PACKAGE = ROOT / "openmemory"
SQL_MODULES = {"store.py", "migrations.py"}       # only these speak SQL
PRINTING_MODULES = {"cli.py"}                     # only this prints or touches the standard streams
SQL_CALLS = {"execute", "executemany", "executescript"}
STREAMS = {"stdout", "stderr", "stdin", "__stdout__", "__stderr__", "__stdin__"}


def modules():
    """(file name, parsed tree, text) of every module of the package."""
    out = []
    for path in sorted(PACKAGE.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        out.append((path.name, ast.parse(text, filename=str(path)), text))
    return out


def offences(skip: set, check) -> list:
    """`openmemory/<module>:<line> <what>` for every node of the modules not in skip that check names."""
    found = []
    for name, tree, _ in modules():
        if name not in skip:
            found += [f"openmemory/{name}:{node.lineno} {what}" for node in ast.walk(tree)
                      for what in [check(node)] if what]
    return found


def _attribute_of(node, module: str, attrs) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in attrs \
        and isinstance(node.value, ast.Name) and node.value.id == module


def sql(node):
    """What in node speaks SQL: a cursor call, sqlite3.connect, an import from sqlite3."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS:
        return f"calls .{node.func.attr}()"
    if _attribute_of(node, "sqlite3", {"connect"}):
        return "opens sqlite3 itself"
    if isinstance(node, ast.ImportFrom) and node.module == "sqlite3":
        return "imports from sqlite3"
    return None


def printing(node):
    """What in node prints or touches a standard stream."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("print", "input"):
        return f"calls {node.func.id}()"
    if _attribute_of(node, "sys", STREAMS):
        return f"touches sys.{node.attr}"
    if isinstance(node, ast.ImportFrom) and node.module == "sys" and any(a.name in STREAMS for a in node.names):
        return "imports a standard stream from sys"
    return None


class OnlyTheStoreSpeaksSQL(unittest.TestCase):
    def test_no_module_but_the_store_runs_sql_or_opens_sqlite(self):
        self.assertEqual(offences(SQL_MODULES, sql), [], "only store.py and migrations.py may speak SQL")

    def test_the_scan_sees_sql(self):
        tree = ast.parse("import sqlite3\ndef f(store):\n    store._db.execute('SELECT 1')\n    sqlite3.connect(p)\n")
        self.assertEqual(sorted(filter(None, map(sql, ast.walk(tree)))), ["calls .execute()", "opens sqlite3 itself"])

    def test_the_store_keeps_its_connection_private(self):
        reach = lambda node: f"reaches .{node.attr}" if isinstance(node, ast.Attribute) \
            and node.attr in ("db", "_db") else None
        self.assertEqual(offences(SQL_MODULES, reach), [])


class OnlyTheCliPrints(unittest.TestCase):
    def test_no_module_but_the_cli_prints_or_touches_the_standard_streams(self):
        self.assertEqual(offences(PRINTING_MODULES, printing), [],
                         "only cli.py prints; the others are handed their streams")

    def test_the_scan_sees_printing(self):
        tree = ast.parse("import sys\nprint('x')\nsys.stdout.write('x')\nlog(stream=sys.stderr)\n")
        self.assertEqual(sorted(filter(None, map(printing, ast.walk(tree)))),
                         ["calls print()", "touches sys.stderr", "touches sys.stdout"])


# Who may create, replace or remove files: the writers of files.py (and the primitives beneath
# them); besides them the store creates its database file and the CLI its log folder.
OS_WRITES = {"replace", "link", "rename", "unlink", "remove", "makedirs", "O_CREAT"}
PATH_WRITES = {"write_bytes", "write_text", "mkdir", "mkstemp", "symlink_to", "touch"}
FILE_WRITERS = {"files.py": None,  # None: any write (own files, memory folders, setup's configuration)
                "store.py": {"mkdir", "O_CREAT"}, "cli.py": {"mkdir"}}


def file_writes(tree) -> list:
    """(line, what) of every call in tree that creates, replaces or removes a file or folder."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in OS_WRITES:
            out.append((node.lineno, node.attr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in PATH_WRITES:
            out.append((node.lineno, node.func.attr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"),
                                                                  None)
            if isinstance(mode, ast.Constant) and set(str(mode.value)) & set("wax+"):
                out.append((node.lineno, "open for writing"))
    return out


class OnlyTheWritersWrite(unittest.TestCase):
    def test_files_are_written_only_through_the_writers(self):
        found = []
        for name, tree, _ in modules():
            allowed = FILE_WRITERS.get(name, set())
            for line, what in file_writes(tree):
                if allowed is not None and what not in allowed:
                    found.append(f"openmemory/{name}:{line} {what}")
        self.assertEqual(found, [], "write files through files.py (Claude Code's memory folders, "
                                    "OPENMEMORY_HOME, setup's configuration)")

    def test_the_scan_sees_writes(self):
        tree = ast.parse("import os\nos.replace(a, b)\np.write_text('x')\nopen(p, 'w')\nopen(p)\n")
        self.assertEqual(sorted(file_writes(tree)), [(2, "replace"), (3, "write_text"), (4, "open for writing")])


class Shape(unittest.TestCase):
    def test_no_grab_bag_module(self):
        self.assertEqual([n for n, _, _ in modules() if n in ("utils.py", "helpers.py", "misc.py", "common.py")], [])

    def test_the_package_stays_flat(self):
        self.assertEqual([p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__"], [])

    def test_no_import_cycle(self):
        graph = import_graph()
        self.assertIn("store", graph["sleep"])  # the graph sees imports, also inside functions
        self.assertIn("ingest", graph["cli"])
        cycle = find_cycle(graph)
        self.assertIsNone(cycle, f"import cycle: {' -> '.join(cycle or [])}")


def import_graph() -> dict:
    """{module: set of package modules it imports}, module-level and function-level alike."""
    names = {name[:-3] for name, _, _ in modules()}
    graph = {}
    for name, tree, _ in modules():
        deps = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module:
                    deps.add(node.module.split(".")[0])
                else:
                    deps.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("openmemory"):
                parts = node.module.split(".")
                deps.update([parts[1]] if len(parts) > 1 else [a.name for a in node.names])
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[1] for a in node.names if a.name.startswith("openmemory."))
        graph[name[:-3]] = (deps & names) - {name[:-3], "__init__"}
    return graph


def find_cycle(graph: dict):
    """One cycle as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == "open":
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


# Each module's floor (ARCHITECTURE.md, "Floors"): a module imports modules of its own floor or
# below, never one above it (on one floor, one way only: no cycle, as Shape pins).
FLOORS = {
    0: ("__init__", "clock", "shorten", "errors", "paths", "embed", "redact"),
    1: ("files", "transcripts", "codex", "gemini", "agents", "corrections", "failures", "neighbours"),
    2: ("episodes", "passages", "wording", "counts", "forget", "backing", "migrations", "settings"),
    3: ("store",),
    4: ("ingest", "recall", "render", "llm", "schedule", "review"),
    5: ("sleep", "setup", "mcp", "hook", "judge"),
    6: ("cli", "__main__"),
}
FLOOR = {module: floor for floor, names in FLOORS.items() for module in names}


def imports_from_above(graph: dict, floor: dict) -> list:
    """`module (floor n) imports other (floor m)` for every import of a module above the importer's floor."""
    return [f"{m} (floor {floor[m]}) imports {d} (floor {floor[d]})"
            for m in sorted(graph) for d in sorted(graph[m]) if floor[d] > floor[m]]


class Floors(unittest.TestCase):
    def test_every_module_has_one_floor(self):
        names = [m for ms in FLOORS.values() for m in ms]
        self.assertEqual(len(names), len(set(names)), "a module on two floors")
        self.assertEqual(sorted(names), sorted(name[:-3] for name, _, _ in modules()),
                         "give each module of the package a floor (and ARCHITECTURE.md the same)")

    def test_no_module_imports_a_module_above_its_floor(self):
        self.assertEqual(imports_from_above(import_graph(), FLOOR), [],
                         "import downward only: move the code, or the module's floor (and say why)")

    def test_the_check_sees_an_import_from_above(self):
        graph = {"low": {"high"}, "high": {"low", "same"}, "same": set()}
        self.assertEqual(imports_from_above(graph, {"low": 0, "high": 1, "same": 1}),
                         ["low (floor 0) imports high (floor 1)"])


def prints_of(tree) -> list:
    """Lines of a test module that print, but for its `if __name__ == "__main__":` block."""
    script = {id(n) for node in tree.body if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)
              for n in ast.walk(node)}
    return [node.lineno for node in ast.walk(tree) if id(node) not in script and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name) and node.func.id == "print"]


class QuietTests(unittest.TestCase):
    def test_a_plain_test_run_prints_no_figures(self):
        # Figures are shown when asked: helpers.figures (OPENMEMORY_FIGURES=1), or a module run as a script.
        found = {path.name: lines for path in sorted((ROOT / "tests").glob("test_*.py"))
                 for lines in [prints_of(ast.parse(path.read_text(encoding="utf-8")))] if lines}
        self.assertEqual(found, {})

    def test_the_scan_sees_a_print_outside_the_script_block(self):
        tree = ast.parse("def t():\n    print(1)\nif __name__ == '__main__':\n    print(2)\n")
        self.assertEqual(prints_of(tree), [2])


class CycleFinder(unittest.TestCase):
    def test_it_finds_a_cycle_and_none_where_there_is_none(self):
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}))


if __name__ == "__main__":
    unittest.main()

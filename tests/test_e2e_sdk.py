"""The official MCP Python SDK client against `openmemory serve`, in both protocol eras.

The SDK is never a dependency: it is installed once into a throwaway virtual environment
under ~/.cache/openmemory-e2e/ (pip, from PyPI) and the test is skipped, with the reason,
when that cannot be done. OM_E2E_MCP_SDK_VERSION picks another SDK version.
"""
import fcntl
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path

from tests.helpers import ROOT, TempHome

SDK_VERSION = os.environ.get("OM_E2E_MCP_SDK_VERSION", "2.3.0")
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "openmemory-e2e"  # read at import:
VENV = CACHE / f"mcp-sdk-{SDK_VERSION}"                                                    # tests move HOME
PYTHON = VENV / "bin" / "python"

CLIENT = r'''
import asyncio, json, sys
from mcp import Client, StdioServerParameters

async def main(mode, python, root, home, project):
    server = StdioServerParameters(command=python, args=["-m", "openmemory", "serve"], cwd=home,
                                   env={"OPENMEMORY_HOME": home, "PYTHONPATH": root, "CLAUDE_PROJECT_DIR": project})
    out = {}
    async with Client(server, mode=mode) as client:
        out["protocol"] = client.protocol_version
        out["server"] = client.server_info.name
        out["instructions"] = client.instructions
        out["tools"] = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        said = await client.call_tool("remember", {"text": "Deploys go through make release, never a push to prod."})
        out["remember"] = [said.is_error, said.content[0].text]
        found = await client.call_tool("recall", {"query": "how do deploys work", "k": 3})
        out["recall"] = [found.is_error, found.content[0].text, found.structured_content]
        bad = await client.call_tool("recall", {"query": "x", "k": 99})
        out["bad_k"] = [bad.is_error, bad.content[0].text]
        try:
            await client.call_tool("forget", {})
            out["unknown_tool"] = None
        except Exception as e:
            out["unknown_tool"] = [getattr(e, "code", None), str(e)]
    print(json.dumps(out))

asyncio.run(main(*sys.argv[1:6]))
'''


def setUpModule():
    try:
        CACHE.mkdir(parents=True, exist_ok=True)
        lock = open(CACHE / ".mcp-sdk.lock", "w")
    except OSError as e:
        raise unittest.SkipTest(f"no cache folder for the MCP Python SDK at {CACHE}: {e}")
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel test runs install once
        if _sdk_works():
            return
        steps = [[sys.executable, "-m", "venv", "--clear", str(VENV)],
                 [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"mcp=={SDK_VERSION}"]]
        for step in steps:
            try:
                p = subprocess.run(step, capture_output=True, text=True, timeout=600)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise unittest.SkipTest(f"cannot install the MCP Python SDK {SDK_VERSION}: {e}")
            if p.returncode != 0:
                why = (p.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise unittest.SkipTest(f"cannot install the MCP Python SDK {SDK_VERSION} into {VENV}: {why}")
        if not _sdk_works():
            raise unittest.SkipTest(f"the MCP Python SDK installed into {VENV} does not import")


def _sdk_works() -> bool:
    if not PYTHON.exists():
        return False
    return subprocess.run([str(PYTHON), "-c", "from mcp import Client, StdioServerParameters"],
                          capture_output=True, timeout=120).returncode == 0


class OfficialSdkClient(TempHome):
    def connect(self, mode):
        self.home.mkdir(parents=True, exist_ok=True)
        p = subprocess.run([str(PYTHON), "-c", CLIENT, mode, sys.executable, str(ROOT), str(self.home),
                            "/home/dev/shop"], capture_output=True, text=True, timeout=300, cwd=str(self.tmp))
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return json.loads(p.stdout.strip().splitlines()[-1])

    def check(self, out, protocol):
        self.assertEqual(out["protocol"], protocol)
        self.assertEqual(out["server"], "openmemory")
        self.assertIn("recall", out["instructions"])
        self.assertEqual(sorted(out["tools"]), ["recall", "remember", "show"])
        self.assertEqual(out["tools"]["recall"]["required"], ["query"])
        self.assertEqual(out["remember"], [False, "Remembered as note [e1] (project /home/dev/shop); "
                                                  "recall finds it from now on."])
        is_error, text, structured = out["recall"]
        self.assertFalse(is_error)
        self.assertIn("[e1] note · ", text)
        self.assertIn("Deploys go through make release, never a push to prod.", text)
        self.assertIsNone(structured)
        self.assertEqual(out["bad_k"], [True, "k must be an integer from 1 to 50 (got 99)"])
        self.assertEqual(out["unknown_tool"][0], -32602)

    def test_auto_mode_takes_the_modern_era(self):
        self.check(self.connect("auto"), "2026-07-28")

    def test_legacy_mode_initializes(self):
        self.check(self.connect("legacy"), "2025-11-25")


if __name__ == "__main__":
    unittest.main()

"""The `compass` command exits without tearing down the interpreter (pipelines/cli.py::entry), yet as a normal exit
would: same exit code, and nothing a thread or an exit handler still had to write is lost."""

import subprocess
import sys
import textwrap

from tests.paths import ROOT


def test_entry_waits_for_threads_runs_exit_handlers_and_keeps_the_exit_code():
    script = textwrap.dedent("""
        import atexit, threading, time
        from pipelines import cli

        def main():
            atexit.register(lambda: print("exit handler"))
            threading.Thread(target=lambda: (time.sleep(0.3), print("thread"))).start()
            print("main")
            return 3

        cli.main = main
        cli.entry()
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert done.stdout.split() == ["main", "thread", "exit", "handler"], done.stdout

"""``gavel list``: built-in entries, plugins with their origin, broken and shadowed plugins."""

from __future__ import annotations

import json
import subprocess
import sys


def test_list_names_every_entry_and_where_it_is_from(plugin_site, gavel_main):
    plugin_site.install_documented_example()
    plugin_site.install("gavel-broken", "0.2", {"gavel.judges": {"broken": "gavel_broken:make"}},
                        {"gavel_broken/__init__.py": "raise RuntimeError('half installed')\n"})  # fmt: skip
    plugin_site.install("gavel-impostor", "9.9", {"gavel.models": {"scene": "nowhere:Y"}}, {})
    done = gavel_main("list")
    assert done.code == 0, done.text
    lines = done.out.splitlines()
    assert lines[0] == "benchmarks:"
    at = lines.index("  letters          plugin gavel-letters 0.1.0 (gavel.benchmarks: "
                     "gavel_letters:BENCHMARK)")  # fmt: skip
    assert lines[at + 1].strip() == "Letters: how often does a letter occur in a word?"
    assert "  gavel            built-in" in lines
    at = lines.index("  counter          plugin gavel-letters 0.1.0 (gavel.models: "
                     "gavel_letters.model:counter)")  # fmt: skip
    assert lines[at + 1].strip() == "counter[:N] (counts letters; N: add N to every answer)"
    at = lines.index("  broken           plugin gavel-broken 0.2 (gavel.judges: gavel_broken:make)")
    assert lines[at + 1].strip().startswith("ERROR: the judge plugin 'broken'")
    assert "RuntimeError: half installed" in lines[at + 1]
    scene = [i for i, line in enumerate(lines) if line.startswith("  scene ")]
    assert len(scene) == 2 and "ignored: a built-in has this name" in lines[scene[1] + 1]


def test_list_as_json_and_by_kind(plugin_site, gavel_main):
    plugin_site.install_documented_example()
    done = gavel_main("list", "benchmarks", "--format", "json")
    assert done.code == 0, done.text
    entries = json.loads(done.out)
    assert {e["kind"] for e in entries} == {"benchmark"}
    assert [e["name"] for e in entries] == ["gavel", "detailverify", "videohallucer", "letters"]
    (letters,) = [e for e in entries if e["name"] == "letters"]
    assert letters["status"] == "ok" and letters["source"].startswith("plugin gavel-letters")


def test_help_reads_no_plugin(plugin_site):
    """``gavel --help`` neither imports a plugin nor reads the installed packages' metadata."""
    plugin_site.install("gavel-broken", "0.2", {"gavel.benchmarks": {"b": "gavel_broken:B"}},
                        {"gavel_broken/__init__.py": "raise RuntimeError('imported')\n"})  # fmt: skip
    probe = (
        "import sys; from gavel.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if 'metadata' in m or 'broken' in m))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "[]"


def test_list_presets_and_conventions_with_an_example_each(gavel_main):
    done = gavel_main("list", "presets", "conventions")
    assert done.code == 0, done.text
    lines = done.out.splitlines()
    assert lines[0] == "presets (each example's boxes in pixels of a 1000 x 800 image):"
    at = lines.index("  qwen2-vl         built-in")
    assert lines[at + 2].strip().startswith("convention rel1000; rule from QwenLM/Qwen2-VL README")
    assert lines[at + 3].strip().startswith("e.g. <|object_ref_start|>the dog<|object_ref_end|>")
    assert lines[at + 4].strip() == "-> [531, 412.8, 581, 476.8]"
    at = lines.index("  molmo            built-in")
    assert lines[at + 4].strip() == "-> no box"
    conventions = lines.index("conventions (each example's boxes in pixels of a 1000 x 800 image):")
    at = lines.index("  kosmos-2.5       built-in", conventions)
    assert lines[at + 2].strip() == "e.g. <bbox><x_53><y_75><x_371><y_101></bbox>TOTAL 42.00"
    assert "  gpt+paligemma    built-in" in lines

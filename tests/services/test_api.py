"""The facade and the window tests' fake both are what services/api.py promises, area by
area (mypy checks the same statically: knowledge_base._conforms, fakes._conforms)."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from desktop_app.services import api
from desktop_app.services.answers import AnswersService
from desktop_app.services.checking import CheckingService
from desktop_app.services.knowledge_base import KnowledgeBase
from desktop_app.services.library import LibraryService
from desktop_app.services.model_run import ModelService
from tests.ui.fakes import FakeAnswers, FakeChecking, FakeKnowledgeBase, FakeLibrary, FakeModels

AREAS = [
    ("library", api.LibraryAPI, LibraryService, FakeLibrary),
    ("answers", api.AnswersAPI, AnswersService, FakeAnswers),
    ("checking", api.CheckingAPI, CheckingService, FakeChecking),
    ("models", api.ModelsAPI, ModelService, FakeModels),
]


def promised(protocol: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in vars(protocol).items()
            if inspect.isfunction(member) and not name.startswith("_")}


def test_the_protocols_split_the_facades_23_methods_by_area() -> None:
    methods = [name for _, protocol, _, _ in AREAS for name in promised(protocol)] + list(promised(api.KnowledgeBaseAPI))
    assert len(methods) == len(set(methods)) == 23
    assert set(promised(api.KnowledgeBaseAPI)) == {"cancel", "close"}
    areas = {name for name, member in vars(api.KnowledgeBaseAPI).items() if isinstance(member, property)}
    assert areas == {area for area, _, _, _ in AREAS}


@pytest.mark.parametrize(("area", "protocol", "real", "fake"), AREAS, ids=[a[0] for a in AREAS])
def test_the_real_service_and_the_fake_have_every_method_of_their_area(
    area: str, protocol: type, real: type, fake: type,
) -> None:
    for name, signature in promised(protocol).items():
        for implementation in (real, fake):
            method = getattr(implementation, name, None)
            assert method is not None, f"{implementation.__name__} has no {name}"
            have = inspect.signature(method).parameters
            for parameter in signature.parameters.values():
                assert parameter.name in have, f"{implementation.__name__}.{name} takes no {parameter.name}"
                assert have[parameter.name].kind == parameter.kind, f"{implementation.__name__}.{name}({parameter.name})"
            extra = [p for p in have.values() if p.name not in signature.parameters]
            assert all(p.default is not inspect.Parameter.empty for p in extra), f"{implementation.__name__}.{name}"
            assert inspect.isasyncgenfunction(method) or inspect.iscoroutinefunction(method) == \
                inspect.iscoroutinefunction(getattr(protocol, name)), f"{implementation.__name__}.{name}"


def test_the_root_and_its_fake_hand_out_the_areas(tmp_path) -> None:  # noqa: ANN001
    from desktop_app.core.settings import Settings

    kb, fake = KnowledgeBase(tmp_path / "lib.duckdb", Settings()), FakeKnowledgeBase()
    for area, _, real, faked in AREAS:
        assert isinstance(getattr(kb, area), real)
        assert isinstance(getattr(fake, area), faked)
    for name in ("cancel", "close"):
        assert callable(getattr(kb, name)) and callable(getattr(fake, name))
    asyncio.run(kb.close())

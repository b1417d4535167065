from __future__ import annotations

import pytest

from mtcommon import Catalogue, CodedError, ErrorCode, render_json, render_line, render_usage


class LockdownError(CodedError):
    code = "project.lockdown"


def test_class_code_is_the_default() -> None:
    error = LockdownError("ad-hoc pools are disabled")
    assert error.code == "project.lockdown"
    assert error.message == "ad-hoc pools are disabled"
    assert str(error) == "ad-hoc pools are disabled"


def test_code_given_at_raise_overrides_the_class_code() -> None:
    error = CodedError("nope", code="pool.not_found", details={"pool": "p"})
    assert error.code == "pool.not_found"
    assert render_json(error) == {
        "error": {"code": "pool.not_found", "message": "nope", "details": {"pool": "p"}}
    }


def test_json_omits_empty_details() -> None:
    assert render_json(CodedError("x", code="a.b")) == {"error": {"code": "a.b", "message": "x"}}


def test_line_is_one_line_with_the_code() -> None:
    error = CodedError("bad\nthing  here", code="config.effort.duplicate")
    assert render_line(error) == "error: bad thing here [config.effort.duplicate]"


def test_usage_line_names_the_help_and_folds_newlines() -> None:
    assert render_usage("No such\n option: --x", "matchmaker") == (
        "error: No such option: --x (see 'matchmaker --help') [usage]"
    )
    assert render_usage("bad") == "error: bad [usage]"
    assert render_usage("bad field", "tasktool list", code="filter.field") == (
        "error: bad field (see 'tasktool list --help') [filter.field]"
    )


def test_details_are_copied_not_shared() -> None:
    details = {"a": 1}
    error = CodedError("x", details=details)
    details["a"] = 2
    assert error.details == {"a": 1}


def test_is_an_exception() -> None:
    with pytest.raises(CodedError) as info:
        raise LockdownError("locked")
    assert "project.lockdown" in repr(info.value)


def test_one_catalogue_type_answers_both_products_lookups() -> None:
    from matchmaker.errors import CATALOGUE as MATCHMAKER
    from tasktool.model.errors import CATALOGUE as TASKTOOL

    assert isinstance(MATCHMAKER, Catalogue)
    assert isinstance(TASKTOOL, Catalogue)
    catalogue = Catalogue({"a.used": ErrorCode("Usage", exit=2, http=400), "a.seen": ErrorCode()})
    assert catalogue.exit_status("a.used") == 2
    assert catalogue.http_status("a.used") == 400
    assert (catalogue.exit_status("a.seen"), catalogue.http_status("a.seen")) == (1, 500)
    assert (catalogue.exit_status("z.unknown"), catalogue.http_status("z.unknown")) == (1, 500)
    assert TASKTOOL.exit_status("task.not_found") == 1
    assert TASKTOOL.http_status("task.not_found") == 404
    assert "data" in MATCHMAKER["project.not_found"].surfaces

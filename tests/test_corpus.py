"""The corpus loader, driven through real files in a copy of the spec folder.

Every refusal must name the file and, where there is one, the case; the
compact forms (``repeat``, ``concat``, ``${i}``) must expand to exactly the
steps they stand for.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from helpers import copy_spec
from tokasm.corpus import (
    Apply,
    CorpusError,
    Get,
    Raises,
    ReadSince,
    Returns,
    load_corpus,
    load_file,
    parse_case,
    requirement_ids,
)
from tokasm.corpus._paths import SPEC_DIR_ENV, spec_dir

if TYPE_CHECKING:
    from pathlib import Path

_CASE_HEAD = """\
description: test file
cases:
  - id: {case_id}
    description: a case
    requirements: [APPEND]
"""


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    """A copy of the real spec folder (schema, SPEC.md, VERSION) with an empty cases folder."""
    return copy_spec(tmp_path)


def _write(spec: Path, name: str, text: str) -> Path:
    path = spec / "cases" / name
    path.write_text(text, encoding="utf-8")
    return path


def _case(spec: Path, steps: str, case_id: str = "t.case", name: str = "t.yaml") -> Path:
    """Write one case with ``steps`` (YAML lines indented for the steps list)."""
    return _write(spec, name, _CASE_HEAD.format(case_id=case_id) + "    steps:\n" + steps)


def _refusal(spec: Path) -> str:
    with pytest.raises(CorpusError) as caught:
        load_corpus(spec)
    return str(caught.value)


def test_valid_case_loads_with_defaults(spec: Path) -> None:
    _case(spec, "      - apply: {id: m, delta: x}\n        returns: null\n")
    corpus = load_corpus(spec)
    (case,) = corpus.cases
    assert (case.id, case.profile, case.instances) == ("t.case", "required", ("a",))
    assert case.steps == (Apply("a", Returns(None), {"id": "m", "delta": "x"}, where="1"),)
    assert corpus.version == (spec / "VERSION").read_text().strip()
    assert corpus.root == spec


def test_schema_violation_names_file_and_case(spec: Path) -> None:
    path = _case(spec, "      - apply: {id: m, delta: x}\n", case_id="no.returns")
    message = _refusal(spec)
    assert str(path) in message
    assert "case 'no.returns'" in message
    assert "schema violation" in message


def test_schema_violation_points_into_the_step_kind(spec: Path) -> None:
    """A step's kind key selects its schema, so a typo is named, not 'no alternative matched'."""
    _case(spec, "      - get: m\n        onn: b\n        returns: null\n")
    message = _refusal(spec)
    assert "cases/0/steps/0" in message
    assert "unknown step key 'onn'" in message


def test_schema_violation_without_usable_id_names_case_number(spec: Path) -> None:
    _case(spec, "      - get: m\n        returns: null\n", case_id="Bad_ID")
    message = _refusal(spec)
    assert "case #1" in message or "case 'Bad_ID'" in message
    assert "t.yaml" in message


def test_multiline_description_refused(spec: Path) -> None:
    _write(
        spec,
        "t.yaml",
        'description: f\ncases:\n  - id: a.b\n    description: "two\\nlines"\n'
        "    requirements: [APPEND]\n    steps:\n      - get: m\n        returns: null\n",
    )
    assert "case 'a.b'" in _refusal(spec)


def test_yaml_syntax_error_names_the_file(spec: Path) -> None:
    path = _write(spec, "broken.yaml", "description: x\ncases: [\n  - id: {\n")
    message = _refusal(spec)
    assert str(path) in message
    assert "not valid YAML" in message


def test_duplicate_yaml_keys_refused(spec: Path) -> None:
    path = _case(spec, "      - apply: {id: m, delta: a, delta: b}\n        returns: null\n")
    message = _refusal(spec)
    assert str(path) in message
    assert "duplicate key 'delta'" in message


def test_unsafe_yaml_tags_refused(spec: Path) -> None:
    path = _case(spec, "      - get: !!python/object/apply:os.getcwd []\n        returns: null\n")
    message = _refusal(spec)
    assert str(path) in message
    assert "not valid YAML" in message


def test_undecodable_file_named(spec: Path) -> None:
    path = spec / "cases" / "latin1.yaml"
    path.write_bytes("description: caf\u00e9\n".encode("latin-1"))
    message = _refusal(spec)
    assert str(path) in message
    assert "cannot read" in message


def test_duplicate_case_ids_across_files_name_both(spec: Path) -> None:
    steps = "      - get: m\n        returns: null\n"
    first = _case(spec, steps, case_id="same.id", name="a.yaml")
    second = _case(spec, steps, case_id="same.id", name="b.yaml")
    message = _refusal(spec)
    assert str(first) in message
    assert str(second) in message
    assert "'same.id'" in message


def test_unknown_requirement_id_refused(spec: Path) -> None:
    text = _CASE_HEAD.format(case_id="t.case").replace("[APPEND]", "[APPEND, NO-SUCH-RULE]")
    path = _write(spec, "t.yaml", text + "    steps:\n      - get: m\n        returns: null\n")
    message = _refusal(spec)
    assert str(path) in message
    assert "NO-SUCH-RULE" in message
    assert "case 't.case'" in message


@pytest.mark.parametrize("delta", ["m${x}", "$5", "${i"])
def test_bad_substitution_names_case_and_text(spec: Path, delta: str) -> None:
    """Inside an 'as' repeat: an unknown name, or a '$' that starts no placeholder."""
    _case(
        spec,
        "      - repeat: 2\n        as: i\n        steps:\n"
        f'          - apply: {{id: m, delta: "{delta}"}}\n            returns: null\n',
    )
    message = _refusal(spec)
    assert "case 't.case'" in message
    assert f"bad ${{...}} substitution in {delta!r}" in message


def test_undeclared_instance_refused(spec: Path) -> None:
    _case(spec, "      - get: m\n        on: b\n        returns: null\n")
    message = _refusal(spec)
    assert "case 't.case'" in message
    assert "'b'" in message
    assert "not declared" in message


def test_shadowed_repeat_variable_refused(spec: Path) -> None:
    _case(
        spec,
        "      - repeat: 2\n        as: i\n        steps:\n"
        "          - repeat: 2\n            as: i\n            steps:\n"
        "              - get: m\n                returns: null\n",
    )
    assert "shadows" in _refusal(spec)


def test_shadowed_text_repeat_variable_refused(spec: Path) -> None:
    _case(
        spec,
        "      - repeat: 2\n        as: i\n        steps:\n"
        '          - get: {repeat: 2, as: i, text: "${i}"}\n            returns: null\n',
    )
    message = _refusal(spec)
    assert "case 't.case'" in message
    assert "'as: i' shadows" in message


def test_no_case_files_refused(spec: Path) -> None:
    assert str(spec / "cases") in _refusal(spec)


def test_step_repeat_with_variable_expands_in_order(spec: Path) -> None:
    path = _case(
        spec,
        "      - repeat: 3\n        as: i\n        steps:\n"
        '          - apply: {id: "m${i}", delta: "<${i}>"}\n            returns: null\n'
        '          - get: "m${i}"\n            returns: "<${i}>"\n'
        "      - get: m2\n        returns: <2>\n",
    )
    (case,) = load_file(path, spec)
    assert [step.where for step in case.steps] == [
        "1[0].1", "1[0].2", "1[1].1", "1[1].2", "1[2].1", "1[2].2", "2",
    ]  # fmt: skip
    assert case.step_count == 7  # what ``tokasm list`` shows, counted without expanding
    assert [s.event for s in case.steps if isinstance(s, Apply)] == [
        {"id": f"m{i}", "delta": f"<{i}>"} for i in range(3)
    ]
    assert [s.expect for s in case.steps if isinstance(s, Get)][:3] == [
        Returns(f"<{i}>") for i in range(3)
    ]


def test_nested_repeats_see_outer_variables(spec: Path) -> None:
    path = _case(
        spec,
        "      - repeat: 2\n        as: t\n        steps:\n"
        "          - repeat: 2\n            as: u\n            steps:\n"
        '              - get: "${t}.${u}"\n                returns: null\n',
    )
    (case,) = load_file(path, spec)
    assert [s.message_id for s in case.steps if isinstance(s, Get)] == ["0.0", "0.1", "1.0", "1.1"]
    assert case.step_count == 4


def test_text_repeat_concat_and_variable(spec: Path) -> None:
    path = _case(
        spec,
        "      - apply:\n          id: m\n"
        "          delta:\n"
        '            concat: ["[", {repeat: 3, text: ab}, {repeat: 4, as: i, text: "${i},"}, "]"]\n'
        "        returns: null\n"
        "      - get: {repeat: 0, text: x}\n        returns: {concat: []}\n",
    )
    (case,) = load_file(path, spec)
    first, second = case.steps
    assert isinstance(first, Apply)
    assert first.event == {"id": "m", "delta": "[ababab0,1,2,3,]"}
    assert second == Get("a", Returns(""), "", where="2")


def test_dollar_literals(spec: Path) -> None:
    """Outside an 'as' repeat '$' is literal; inside one, '$$' is a literal '$'."""
    path = _case(
        spec,
        '      - apply: {id: m, delta: "$$ ${i}"}\n        returns: null\n'
        "      - repeat: 1\n        as: i\n        steps:\n"
        '          - apply: {id: m, delta: "$$${i}$$"}\n            returns: null\n'
        '      - get: m\n        returns: {repeat: 2, as: i, text: "$$${i}"}\n',
    )
    (case,) = load_file(path, spec)
    assert [s.event for s in case.steps if isinstance(s, Apply)] == [
        {"id": "m", "delta": "$$ ${i}"},
        {"id": "m", "delta": "$0$"},
    ]
    assert case.steps[-1].expect == Returns("$0$1")


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ("!!set {a: null}", "a YAML set"),
        ("!!binary aGk=", "a YAML binary"),
        ("!!omap [{a: 1}]", "a YAML omap"),
        ("!!timestamp 2024-05-01", "a YAML timestamp"),
        ("!custom x", "a YAML !custom"),
        (".nan", "nan is not a JSON number"),
        ("-.inf", "-inf is not a JSON number"),
        ("1.0e+400", "inf is not a JSON number"),
        ("9007199254740992", "MAX_SAFE_INTEGER"),
        ("{1: x}", "a mapping key must be a string"),
    ],
)
def test_values_json_cannot_say_are_refused(spec: Path, value: str, named: str) -> None:
    """A set, a date or bytes would reach in-process targets as no testee could be sent it,
    and a set is not copied for each target: every route must read the same events."""
    text = _CASE_HEAD.format(case_id="t.case").replace("[APPEND]", "[STRICT-ID-TYPE]") + (
        "    profile: strict\n    steps:\n"
        f"      - apply_raw: {{id: m, tags: {value}}}\n        raises: TypeError\n"
    )
    path = _write(spec, "t.yaml", text)
    message = _refusal(spec)
    assert str(path) in message
    assert named in message


def test_a_date_like_text_stays_a_string(spec: Path) -> None:
    """YAML 1.1 would read 2024-05-01 as a date; the loader keeps it text, as JSON would."""
    steps = "      - apply: {id: 2024-05-01, delta: x, final: true}\n        returns: x\n"
    (case,) = load_file(_case(spec, steps), spec)
    assert isinstance(case.steps[0], Apply)
    assert case.steps[0].event == {"id": "2024-05-01", "delta": "x", "final": True}


@pytest.mark.parametrize(
    "step",
    [
        "      - apply: {id: m, delta: {code_point: 65.0}}\n        returns: null\n",
        "      - repeat: 2.0\n        steps:\n          - get: m\n            returns: null\n",
        "      - read_since: {id: m, offset: 1.0}\n        returns: null\n",
    ],
    ids=["code-point", "repeat", "offset"],
)
def test_a_whole_number_written_as_a_float_is_refused_naming_the_case(
    spec: Path, step: str
) -> None:
    """The schema takes 2.0 for an integer; expanding it raised a TypeError traceback."""
    _case(spec, step)
    message = _refusal(spec)
    assert "case 't.case'" in message
    assert "whole number" in message


def test_on_key_and_yes_no_stay_strings(spec: Path) -> None:
    """YAML 1.1 would read the key 'on' as True and 'no' as False; the loader keeps them."""
    text = _CASE_HEAD.format(case_id="t.case") + (
        "    instances: [a, b]\n    steps:\n"
        "      - apply: {id: yes, delta: no, final: true}\n        on: b\n        returns: no\n"
    )
    (case,) = load_file(_write(spec, "t.yaml", text), spec)
    assert case.steps == (
        Apply("b", Returns("no"), {"id": "yes", "delta": "no", "final": True}, where="1"),
    )


def test_apply_raw_is_sent_exactly(spec: Path) -> None:
    text = _CASE_HEAD.format(case_id="t.case").replace("[APPEND]", "[STRICT-ID-TYPE]") + (
        "    profile: strict\n    steps:\n"
        '      - apply_raw: {id: 1, delta: "${i}"}\n        raises: TypeError\n'
        "      - apply_raw: null\n        raises: TypeError\n"
    )
    (case,) = load_file(_write(spec, "t.yaml", text), spec)
    assert case.profile == "strict"
    assert [(s.event, s.expect) for s in case.steps if isinstance(s, Apply)] == [
        ({"id": 1, "delta": "${i}"}, Raises("TypeError")),
        (None, Raises("TypeError")),
    ]


def test_read_since_offset_template(spec: Path) -> None:
    path = _case(
        spec,
        "      - repeat: 2\n        as: t\n        steps:\n"
        "          - repeat: 3\n            as: u\n            steps:\n"
        '              - read_since: {id: m, offset: "${t}${u}0"}\n                returns: null\n'
        "      - read_since: {id: m, offset: 7}\n        returns: null\n",
    )
    (case,) = load_file(path, spec)
    offsets = [s.offset for s in case.steps if isinstance(s, ReadSince)]
    assert offsets == [0, 10, 20, 100, 110, 120, 7]


def test_read_since_offset_template_outside_repeat_refused(spec: Path) -> None:
    _case(spec, '      - read_since: {id: m, offset: "${i}"}\n        returns: null\n')
    message = _refusal(spec)
    assert "case 't.case'" in message
    assert "offset" in message


def test_spec_dir_override(spec: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _case(spec, "      - get: m\n        returns: null\n", case_id="only.here")
    with (spec / "SPEC.md").open("a", encoding="utf-8") as rules:
        rules.write("\n- **EXTRA-RULE** (behaviour): only in this copy.\n")
    monkeypatch.setenv(SPEC_DIR_ENV, str(spec))
    assert spec_dir() == spec
    assert [case.id for case in load_corpus()] == ["only.here"]
    assert requirement_ids()["EXTRA-RULE"] == "behaviour"


def test_spec_dir_override_without_version_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SPEC_DIR_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(CorpusError, match="nowhere"):
        spec_dir()


def test_every_bundled_file_passes_the_schema() -> None:
    """tokasm trusts the spec folder it ships, loading it unchecked and expanding each case
    when first used: this test is that check. Loaded as any other file is, each bundled
    file is checked against spec/case.schema.json and expanded at once, and must give the
    very same cases and steps."""
    bundled = load_corpus()
    checked = [
        case
        for path in sorted((spec_dir() / "cases").glob("*.yaml"))
        for case in load_file(path, spec_dir())
    ]
    assert len(checked) == len(bundled) > 0
    assert [(c.document, c.steps) for c in checked] == [(c.document, c.steps) for c in bundled]


def test_the_bundled_corpus_loads_without_the_schema_check() -> None:
    """Trusted, so loading and expanding it never imports the schema checker; importing
    the package imports neither it nor YAML."""
    code = (
        "import sys, tokasm.corpus as corpus\n"
        "assert not {'yaml', 'jsonschema'} & set(sys.modules), 'imported with the package'\n"
        "corpus.expand(corpus.load_corpus())\n"
        "print('jsonschema' in sys.modules)\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert (ran.returncode, ran.stdout) == (0, "False\n"), ran.stderr


def test_every_bundled_case_is_rebuilt_from_its_document_as_json() -> None:
    """What another process receives: a case's document through JSON, its source and
    whether it is bundled, rebuilt unchecked into an equal case with equal steps."""
    for case in load_corpus():
        document = json.loads(json.dumps(case.document))
        rebuilt = parse_case(document, case.source, bundled=case.bundled)
        assert rebuilt == case
        assert (rebuilt.steps, rebuilt.features) == (case.steps, case.features)
        assert (rebuilt.id, rebuilt.description, rebuilt.requirements) == (
            case.id,
            case.description,
            case.requirements,
        )
        assert (rebuilt.profile, rebuilt.instances, rebuilt.events_in_process) == (
            case.profile,
            case.instances,
            case.events_in_process,
        )


def test_a_user_case_is_rebuilt_as_a_user_case(spec: Path) -> None:
    path = _case(spec, "      - get: m\n        returns: null\n")
    (case,) = load_corpus(user_cases=[path]).cases[-1:]
    assert case.bundled is False
    rebuilt = parse_case(json.loads(json.dumps(case.document)), path, bundled=False)
    assert rebuilt == case
    assert rebuilt != parse_case(case.document, path)  # bundled is part of the case

"""The shipped judge prompts: each loads, declares exactly the fields its texts use, and renders
in the requested language with an English fallback."""

from __future__ import annotations

import pytest

from duplexeval.judge._templates import _parse, load_prompt, prompt_ids

TOML = '''
id = "t.x"
version = 3
score_min = 0
score_max = 5
fields = ["a", "b"]
[text.en]
system = 'Rate. Answer {"score": 1, "reason": "..."} costs $$1.'
user = "A: $a / B: ${b}"
'''


@pytest.mark.parametrize("prompt_id", prompt_ids())
def test_every_shipped_prompt_loads_and_renders(prompt_id: str) -> None:
    template = load_prompt(prompt_id)
    assert template.prompt.prompt_id == prompt_id and template.prompt.version >= 1
    values = {name: f"<{name}>" for name in template.fields}
    for language in template.languages:
        item = template.render("item-1", language, **values)
        text = "\n".join(content for _, content in item.messages)
        assert all(f"<{name}>" in text for name in template.fields)
        assert "$" not in text.replace("$$", "")
        if template.answer == "score":  # the answer format is asked for
            assert '"score"' in text and '"reason"' in text
        else:
            assert "JSON" in text and "{" in text


def test_m3_prompts_exist_in_english_and_japanese() -> None:
    for prompt_id in ("m3.relevance", "m3.consistency", "m3.qa"):
        assert load_prompt(prompt_id).languages == ["en", "ja"]


def test_render_substitutes_falls_back_to_english_and_checks_fields() -> None:
    template = _parse("t.x", TOML)
    item = template.render("i", "ja", a="1", b="2")
    assert item.messages == (("system", 'Rate. Answer {"score": 1, "reason": "..."} costs $1.'),
                             ("user", "A: 1 / B: 2"))
    assert item.prompt.version == 3 and item.prompt.score_max == 5
    with pytest.raises(KeyError):
        template.render("i", "en", a="1")


def test_a_text_with_an_undeclared_field_is_rejected() -> None:
    with pytest.raises(ValueError, match="uses"):
        _parse("t.x", TOML.replace('fields = ["a", "b"]', 'fields = ["a"]'))
    with pytest.raises(ValueError, match="declares id"):
        _parse("t.y", TOML)

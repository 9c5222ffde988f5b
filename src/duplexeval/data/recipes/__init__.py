"""Corpus recipes: ``duplexeval data import FORMAT SOURCE -o DATASET_DIR``.

Each recipe reads a corpus the user has (nothing is downloaded) into the M3 layout
(:mod:`duplexeval.data._m3`): ``candor`` (English chat), ``magicdata`` (Japanese chat) and
``topiocqa`` (English QA, as dialogue specs for the synthesizer).  The table of recipes is
:data:`~duplexeval.data.recipes._registry.RECIPES`; what they share is in
:mod:`~duplexeval.data.recipes._common`.  The one exception to "nothing is downloaded" is
``duplexeval data download NAME`` (:mod:`~duplexeval.data.recipes._download`), which fetches a
peer benchmark's public release (``flexi``, ``mtr``, ``fdb-v1``) when asked and imports it with
the recipe of that name.
"""

from duplexeval.data.recipes._registry import RECIPES, Recipe, recipe, recipes, staged_output

__all__ = ["RECIPES", "Recipe", "recipe", "recipes", "staged_output"]

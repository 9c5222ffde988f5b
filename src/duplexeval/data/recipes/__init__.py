"""Corpus recipes: ``duplexeval data import FORMAT SOURCE -o DATASET_DIR``.

Each recipe reads a corpus the user has (nothing is downloaded) into the M3 layout
(:mod:`duplexeval.data.m3`): ``candor`` (English chat), ``magicdata`` (Japanese chat) and
``topiocqa`` (English QA, as dialogue specs for the synthesizer).  The table of recipes is
:data:`~duplexeval.data.recipes.registry.RECIPE_MODULES`; what they share is in
:mod:`~duplexeval.data.recipes.common`.
"""

from duplexeval.data.recipes.registry import RECIPE_MODULES, Recipe, recipe, recipes, staged_output

__all__ = ["RECIPE_MODULES", "Recipe", "recipe", "recipes", "staged_output"]

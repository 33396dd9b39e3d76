"""Synthetic cluster data from archetypes (seed 001, thesis chapter 5; Zellinger and Bühlmann, 2025).

`archetype` holds the Table 5.1 parameters and their validation, `maxmin` the max-min sampling of
radii, aspect ratios, axis lengths and group sizes (App. 4A) and Haar orientations, `overlap` the LDA /
C2C / exact overlaps (eqs. 5.1-5.6), `centers` the packing initialization and overlap-loss SGD (eqs.
5.7-5.9), `mixture` the mixture models and `generate` (§5.3 steps 1-4), `transforms` `distort` (App. 4E)
and `wrap_around_sphere`. numpy/scipy/scikit-learn only: `mixture` says why not the upstream package.
"""

from compass.clusters.archetype import DISTRIBUTIONS, Archetype, ArchetypeError
from compass.clusters.mixture import Dataset, MixtureModel, generate
from compass.clusters.transforms import distort, wrap_around_sphere

__all__ = ["DISTRIBUTIONS", "Archetype", "ArchetypeError", "Dataset", "MixtureModel", "distort", "generate",
           "wrap_around_sphere"]

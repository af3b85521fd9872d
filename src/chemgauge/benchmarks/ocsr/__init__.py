"""Image-to-structure (OCSR) benchmark: manifest, renderer cohort, runner, scorer and report."""

"""llm-compass science core: one subpackage per seed paper, pure Python (no Dagster, no DuckDB).

Map of the papers:

    000 ML Compass               -> compass.mlcompass
    001 Zellinger thesis         -> compass.cascades (chapters 2-4; chapter 5 -> compass.clusters)
    002 Capability Frontier      -> compass.oracle
    003 Meta-Router              -> compass.router (not built yet)
    004 CUPID                    -> compass.matching (not built yet)
    data ingest (not a paper)    -> compass.ingest

References (as given in the papers' own texts):

000  Vassilis Digalakis Jr, Ramayya Krishnan, Gonzalo Martín Fernández and Agni Orfanoudaki.
     "ML Compass: Navigating Capability, Cost, and Compliance Trade-offs in AI Model Deployment."
     Manuscript (year not given in the text). arXiv id not given in the text.
001  Michael J. Zellinger. "White Elephants and Cash Cows: Economically Wrangling the Zoo of AI
     Models." PhD thesis, California Institute of Technology, 2026 (defended July 17, 2025).
     arXiv id not given in the text for the thesis; its chapters are Zellinger and Thomson,
     "Rational Tuning of LLM Cascades via Probabilistic Modeling" (TMLR, 2025; ch. 2),
     "Economic Evaluation of LLMs" (2025, arXiv:2507.03834; ch. 3) and "Fail Fast, or Ask:
     Mitigating the Deficiencies of Reasoning LLMs with Human-in-the-Loop Systems Engineering"
     (2025, arXiv:2507.14406; ch. 4); ch. 5 is Zellinger and Bühlmann, "Natural Language-Based
     Synthetic Data Generation for Cluster Analysis" (Journal of Classification, 2025).
002  Anonymous authors. "The Capability Frontier: Benchmarks Miss 82% of Model Performance."
     Paper under double-blind review (year not given). arXiv id not given in the text.
003  Anonymous authors. "Meta-Router: Bridging Gold-Standard and Preference-Based Evaluations in
     LLM Routing." Paper under double-blind review (year not given). arXiv id not given in the text.
004  Authors not given in the text. "CUPID in the Model Zoo: Online Matchmaking for Selecting Your
     Dream LLM." (Year not given.) arXiv id not given in the text.

Section, equation and table numbers in the docstrings of the subpackages refer to these texts.
Figures live in each subpackage's `plots` module, which is the only one importing matplotlib
directly; import it explicitly.
"""

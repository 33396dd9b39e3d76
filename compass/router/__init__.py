"""Meta-router (seed paper 003, "META-ROUTER: Bridging gold-standard and preference-based evaluations in LLM
routing"; implementation guide ../shared/specs/spec-003-metarouter.md): route each query to a primary model
M_p or a cheap alternative M_a on an estimate ψ̂(q) of the gold-standard quality gain, learned from a few gold
labels r and many preference labels y whose bias Δ(q) = ψ(q) − η(q) is estimated as a conditional average
treatment effect (§3.2, Lemma 1).

`normalize` scales gold labels to the preference scale (Remark 1); `learners` builds the one learner class the
paper uses everywhere (random forest; LightGBM in place of XGBoost) with out-of-bag or cross-fitted nuisance
predictions; `routers` fits the routers of §4.1 (oracle, pooled, preference-only, gold-only, mean-shift, and
the R- and DR-learner meta-routers of §3.3 / App. A.3); `decision` routes by ψ̂(q) > w·(C_p − C_a) (eq. 4) and
picks w for a budget (App. A.1); `evaluation` computes the efficiency gain against random routing at fixed
primary-usage ratios (§4.1); `synthetic` is the spec's LLM-free generator (tests and simulation only).
`multi` is App. A.2's multi-model meta-router (pairs as covariates, objective (S2), routing on least-squares
per-model scores), `btl` its Bradley–Terry–Luce preference model on the label scale 2η − 1, `multi_study` its
synthetic Monte Carlo study and real-data demonstration.
"""

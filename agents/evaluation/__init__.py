"""Evaluation of players: a game between three policies (:mod:`.match`), the duplicate arena
(:mod:`.arena`) and its batched form for networks (:mod:`.vector_arena`), the league of many agents
(:mod:`.league`), their result files (:mod:`.results`) and par scores (:mod:`.par`)."""

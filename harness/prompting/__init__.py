"""What a model sees and how its replies become moves: prompts, episode memory, beliefs, parsing, model agents.

``renderer`` (jinja2 templates under ``prompts/``, hashed), ``memory`` (episode
summaries), ``beliefs`` (elicitation and scoring), ``moves`` (reply parser and
re-asking), and the model-driven agents ``policy_agent`` and ``strategist_agent``.
May import: ``engine``, ``agents``, ``harness.play``, ``harness.models``.
"""

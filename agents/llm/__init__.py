"""Model-driven agents: the model reaches them only through the harness's ModelClient."""

"""INO optimizer: LLM layer, actionability and extraction, variants A-E, probes, reflector."""

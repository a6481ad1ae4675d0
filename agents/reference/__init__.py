"""Agents written for the arena paper's public reference environment, plugged in unchanged (``adapter``)."""

"""Edge-factored linear models and their files."""

"""Teams and their accounts: the roster, and the rules' limits counted per team."""

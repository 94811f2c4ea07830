# stand-in for a remote-code file; mlx_lm.convert copies every *.py

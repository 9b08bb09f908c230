print("mapping-eval: under construction")

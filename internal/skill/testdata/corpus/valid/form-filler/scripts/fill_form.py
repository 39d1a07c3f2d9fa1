import sys

# Never run by shelldon; listed only.
print(sys.argv[1:])

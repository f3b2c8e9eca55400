import Automaton

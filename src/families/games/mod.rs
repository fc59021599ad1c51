//! Games and puzzles solved by search or simulation.

mod game_of_life;
mod jugs;
pub(crate) mod ladder_words;
mod maze;
mod mini_sudoku;
mod n_queens;
mod puzzle24;
mod sokoban;
mod sudoku;
mod tower_of_hanoi;
mod word_ladder;

use super::Family;

pub static FAMILIES: &[&dyn Family] = &[
    &game_of_life::GameOfLife,
    &maze::Maze,
    &mini_sudoku::MiniSudoku,
    &n_queens::NQueens,
    &puzzle24::Puzzle24,
    &tower_of_hanoi::TowerOfHanoi,
    &word_ladder::WordLadder,
    &jugs::Jugs,
    &sudoku::Sudoku,
    &sokoban::Sokoban,
];
